package restapi

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/utils/ptr"

	"github.com/kurz-dev/kurz/config"
)

// applyUserRoles installs kurz-viewer and kurz-editor, as `kurz dev` does.
func applyUserRoles(ctx context.Context) error {
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(config.UserRoles), 4096)
	for {
		var role rbacv1.ClusterRole
		if err := dec.Decode(&role); err == io.EOF {
			return nil
		} else if err != nil {
			return fmt.Errorf("decode user roles: %w", err)
		}
		if role.Name == "" {
			continue
		}
		if err := k8s.Create(ctx, &role); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("create %s: %w", role.Name, err)
		}
	}
}

// workspace is a namespace with an editor and a viewer ServiceAccount.
type workspace struct {
	ns, uid        string
	editor, viewer *apiClient
}

// newWorkspace creates a namespace, ServiceAccounts bound to kurz-editor
// and kurz-viewer, and their tokens. It waits until RBAC grants them, so
// no test caches a denial made before the binding was seen.
func newWorkspace(t *testing.T) *workspace {
	t.Helper()
	g := NewWithT(t)
	ctx := context.Background()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "ws-"}}
	g.Expect(k8s.Create(ctx, ns)).To(Succeed())
	w := &workspace{ns: ns.Name, uid: string(ns.UID)}
	w.editor = &apiClient{t: t, base: baseURL, token: serviceAccountToken(t, ns.Name, "editor", "kurz-editor", "create")}
	w.viewer = &apiClient{t: t, base: baseURL, token: serviceAccountToken(t, ns.Name, "viewer", "kurz-viewer", "list")}
	return w
}

// newWorkspaceWithDomain returns a new workspace holding a Domain of a
// fresh hostname, and that hostname: where most link tests start.
func newWorkspaceWithDomain(t *testing.T) (*workspace, string) {
	t.Helper()
	w := newWorkspace(t)
	host := uniqueHost()
	w.createDomain(t, host)
	return w, host
}

// serviceAccountToken creates ServiceAccount name in ns bound to
// clusterRole and returns a token for it, once RBAC allows verb on links.
func serviceAccountToken(t *testing.T, ns, name, clusterRole, verb string) string {
	t.Helper()
	g := NewWithT(t)
	ctx := context.Background()
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	g.Expect(k8s.Create(ctx, sa)).To(Succeed())
	if clusterRole != "" {
		g.Expect(k8s.Create(ctx, &rbacv1.RoleBinding{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
			RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: clusterRole},
			Subjects:   []rbacv1.Subject{{Kind: "ServiceAccount", Name: name, Namespace: ns}},
		})).To(Succeed())
		g.Eventually(func() bool {
			sar := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
				User:   "system:serviceaccount:" + ns + ":" + name,
				Groups: []string{"system:serviceaccounts", "system:serviceaccounts:" + ns},
				ResourceAttributes: &authorizationv1.ResourceAttributes{
					Namespace: ns, Verb: verb, Group: "kurz.dev", Resource: "links",
				},
			}}
			return k8s.Create(ctx, sar) == nil && sar.Status.Allowed
		}, 30*time.Second, 50*time.Millisecond).Should(BeTrue())
	}
	return mintToken(t, ns, name, DefaultTokenAudience)
}

// mintToken returns a new token of ServiceAccount ns/name for audiences,
// as `kubectl create token --audience` does; none means kube-apiserver's
// own audience, like a pod's token.
func mintToken(t *testing.T, ns, name string, audiences ...string) string {
	t.Helper()
	tr, err := clientset.CoreV1().ServiceAccounts(ns).CreateToken(context.Background(), name, &authenticationv1.TokenRequest{
		Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](3600), Audiences: audiences},
	}, metav1.CreateOptions{})
	NewWithT(t).Expect(err).NotTo(HaveOccurred())
	return tr.Status.Token
}

// apiClient calls the API with one token and checks every answer against
// the OpenAPI document.
type apiClient struct {
	t     *testing.T
	base  string
	token string
	// forwardedFor, when set, is sent as X-Forwarded-For: the client
	// address as limitedURL (which trusts 127.0.0.1 as a proxy) sees it.
	forwardedFor string
}

// response is an answer, with its body decoded when it is JSON.
type response struct {
	status int
	header http.Header
	raw    []byte
	body   map[string]any
}

func (r response) String() string { return fmt.Sprintf("%d %s", r.status, r.raw) }

// errors returns the 422 messages of field.
func (r response) fieldErrors(field string) []string {
	errs, _ := r.body["errors"].(map[string]any)
	list, _ := errs[field].([]any)
	out := make([]string, len(list))
	for i, m := range list {
		out[i], _ = m.(string)
	}
	return out
}

// expectFieldError checks that r is a 422 whose one message for field is
// message.
func expectFieldError(g Gomega, r response, field, message string) {
	g.Expect(r.status).To(Equal(http.StatusUnprocessableEntity), "%s", r)
	g.Expect(r.fieldErrors(field)).To(Equal([]string{message}), "%s", r)
}

// do sends body (marshalled unless it is a string or []byte) and returns
// the answer.
func (c *apiClient) do(method, path string, body any) response {
	c.t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	case []byte:
		rd = bytes.NewReader(b)
	default:
		data, err := json.Marshal(b)
		NewWithT(c.t).Expect(err).NotTo(HaveOccurred())
		rd = bytes.NewReader(data)
	}
	req, err := http.NewRequest(method, c.base+path, rd)
	NewWithT(c.t).Expect(err).NotTo(HaveOccurred())
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	if c.forwardedFor != "" {
		req.Header.Set("X-Forwarded-For", c.forwardedFor)
	}
	return send(c.t, req)
}

func send(t *testing.T, req *http.Request) response {
	t.Helper()
	var reqBody []byte
	if req.Body != nil {
		reqBody, _ = io.ReadAll(req.Body)
		req.Body = io.NopCloser(bytes.NewReader(reqBody))
	}
	resp, err := http.DefaultClient.Do(req)
	NewWithT(t).Expect(err).NotTo(HaveOccurred())
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	NewWithT(t).Expect(err).NotTo(HaveOccurred())
	r := response{status: resp.StatusCode, header: resp.Header, raw: raw}
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
		NewWithT(t).Expect(json.Unmarshal(raw, &r.body)).To(Succeed(), "JSON body: %s", raw)
	}
	checkAgainstOpenAPI(t, req, reqBody, resp, raw)
	return r
}

// createDomain registers host in the workspace and returns its id.
func (w *workspace) createDomain(t *testing.T, host string) string {
	t.Helper()
	r := w.editor.do("POST", "/api/v1/domains", map[string]any{"domain": host})
	NewWithT(t).Expect(r.status).To(Equal(http.StatusCreated), "%s", r)
	return r.body["id"].(string)
}

// createLink creates a link and returns its object.
func (w *workspace) createLink(t *testing.T, body map[string]any) map[string]any {
	t.Helper()
	r := w.editor.do("POST", "/api/v1/links", body)
	NewWithT(t).Expect(r.status).To(Equal(http.StatusCreated), "%s", r)
	return r.body
}

var hostCounter, addressCounter atomic.Int64

// uniqueAddress returns a client address no other test uses, so that each
// test has its own unauthenticated budget on limitedURL.
func uniqueAddress() string {
	n := addressCounter.Add(1)
	return fmt.Sprintf("10.%d.%d.%d", n>>16&0xff, n>>8&0xff, n&0xff)
}

// uniqueHost returns a hostname no other test (or run) uses.
func uniqueHost() string {
	return fmt.Sprintf("h%d-%d.example.com", time.Now().UnixNano()%1e9, hostCounter.Add(1))
}
