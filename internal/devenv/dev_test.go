package devenv_test

import (
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kurzv1alpha1 "github.com/kurz-dev/kurz/api/v1alpha1"
	"github.com/kurz-dev/kurz/internal/devenv"
	kurzscheme "github.com/kurz-dev/kurz/internal/scheme"
	"github.com/kurz-dev/kurz/internal/testenv"
)

var testScheme = kurzscheme.Scheme

const serviceAccountUser = "system:serviceaccount:default:kurz-admin"

// TestDev runs bin/kurz dev as a user would, through two clean restarts, a
// concurrent start and a SIGKILL, and checks that the data directory keeps
// objects and tokens and that no control plane process is ever left behind.
func TestDev(t *testing.T) {
	testenv.Kurz(t)                                    // every step runs it; skipped under -short
	dataDir := filepath.Join(t.TempDir(), "kurz data") // a space, to keep paths honest
	ctx := t.Context()
	// Should a step fail with children left over, do not leak them.
	t.Cleanup(func() { killControlPlane(dataDir) })

	var oldToken, legacyToken string
	ok := t.Run("first start sets up the cluster and the workspace", func(t *testing.T) {
		g := NewWithT(t)
		k := startKurzDev(t, dataDir)
		k.waitBanner(g)
		g.Expect(k.out.String()).To(And(
			ContainSubstring("kube-apiserver ready in"),
			// The data dir has a space: the commands must quote it.
			ContainSubstring(`curl -H "Authorization: Bearer $(cat '`+filepath.Join(dataDir, "token")+`')"`),
			ContainSubstring("KUBECONFIG='"+filepath.Join(dataDir, "kubeconfig")+"' "),
		))

		admin := adminClient(g, dataDir)
		var crds apiextensionsv1.CustomResourceDefinitionList
		g.Expect(admin.List(ctx, &crds)).To(Succeed())
		names := []string{}
		for _, c := range crds.Items {
			names = append(names, c.Name)
		}
		g.Expect(names).To(ContainElements("links.kurz.dev", "domains.kurz.dev", "webhooks.kurz.dev"))
		g.Expect(admin.List(ctx, &kurzv1alpha1.LinkList{}, client.InNamespace("default"))).To(Succeed())

		for _, name := range []string{"token", "kubeconfig"} {
			fi, err := os.Stat(filepath.Join(dataDir, name))
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(fi.Mode().Perm()).To(Equal(os.FileMode(0o600)), name)
		}
		oldToken = readToken(g, dataDir)
		expectWorkspaceToken(ctx, g, dataDir, oldToken)

		// The API token reads them through kurz (writes are kurz-editor's,
		// checked above by SubjectAccessReview).
		g.Expect(admin.Create(ctx, &kurzv1alpha1.Domain{
			ObjectMeta: metav1.ObjectMeta{Name: "links-example-com", Namespace: "default"},
			Spec:       kurzv1alpha1.DomainSpec{Domain: "links.example.com"},
		})).To(Succeed())
		g.Expect(admin.Create(ctx, &kurzv1alpha1.Link{
			ObjectMeta: metav1.ObjectMeta{Name: "hello", Namespace: "default"},
			Spec:       kurzv1alpha1.LinkSpec{Domain: "links.example.com", Key: "hello", URL: "https://example.com/hello"},
		})).To(Succeed())
		expectAPIToken(g, k.apiURL, oldToken)

		k.signal(g, syscall.SIGTERM)
		g.Expect(k.exitCode(g)).To(Equal(0), k.out.String())
		g.Expect(k.out.String()).To(ContainSubstring("kurz dev: stopped"))
		// kurz waits for its children, so they are gone when it is.
		g.Expect(controlPlaneProcesses(dataDir)).To(BeEmpty())
	})
	if !ok {
		return // the later steps build on this one
	}

	ok = t.Run("restart keeps objects and the token, and refuses a concurrent start", func(t *testing.T) {
		g := NewWithT(t)
		k := startKurzDev(t, dataDir)
		k.waitBanner(g)
		g.Expect(k.out.String()).To(ContainSubstring("kept token"))
		g.Expect(readToken(g, dataDir)).To(Equal(oldToken))
		expectKept(ctx, g, dataDir)
		expectWorkspaceToken(ctx, g, dataDir, oldToken)
		expectAPIToken(g, k.apiURL, oldToken)
		// What an older kurz dev wrote: a token for kube-apiserver's audience.
		legacyToken = mintDefaultAudienceToken(ctx, g, dataDir)

		out, err := runKurzDev(t, dataDir)
		g.Expect(err).To(HaveOccurred(), out)
		g.Expect(out).To(ContainSubstring("is in use by another kurz dev"))
		// The refused start touched nothing: the first one still works.
		expectKept(ctx, g, dataDir)

		k.signal(g, syscall.SIGTERM)
		g.Expect(k.exitCode(g)).To(Equal(0), k.out.String())
		g.Expect(controlPlaneProcesses(dataDir)).To(BeEmpty())
	})
	if !ok {
		return
	}

	t.Run("SIGKILL takes the children along and leaves no stale lock", func(t *testing.T) {
		g := NewWithT(t)
		k := startKurzDev(t, dataDir)
		k.waitBanner(g)
		g.Expect(controlPlaneProcesses(dataDir)).To(HaveLen(2))
		k.signal(g, syscall.SIGKILL)
		g.Expect(k.exitCode(g)).To(Equal(-1)) // killed by a signal
		g.Eventually(func() []string { return controlPlaneProcesses(dataDir) }).
			WithTimeout(30 * time.Second).Should(BeEmpty())

		k = startKurzDev(t, dataDir)
		k.waitBanner(g)
		expectKept(ctx, g, dataDir)
		expectWorkspaceToken(ctx, g, dataDir, oldToken)
		k.signal(g, syscall.SIGINT)
		g.Expect(k.exitCode(g)).To(Equal(0), k.out.String())
		g.Expect(controlPlaneProcesses(dataDir)).To(BeEmpty())
	})

	t.Run("a token minted for kube-apiserver is replaced by an API token", func(t *testing.T) {
		g := NewWithT(t)
		g.Expect(legacyToken).NotTo(BeEmpty())
		g.Expect(os.WriteFile(filepath.Join(dataDir, "token"), []byte(legacyToken+"\n"), 0o600)).To(Succeed())
		k := startKurzDev(t, dataDir)
		k.waitBanner(g)
		g.Expect(k.out.String()).To(ContainSubstring("wrote a new token"))
		newToken := readToken(g, dataDir)
		g.Expect(newToken).NotTo(Equal(legacyToken))
		expectWorkspaceToken(ctx, g, dataDir, newToken)
		expectAPIToken(g, k.apiURL, newToken)
		k.signal(g, syscall.SIGTERM)
		g.Expect(k.exitCode(g)).To(Equal(0), k.out.String())
		g.Expect(controlPlaneProcesses(dataDir)).To(BeEmpty())
	})
}

// mintDefaultAudienceToken returns a one-year token of default/kurz-admin
// without an audience (kube-apiserver's), as kurz dev used to write.
func mintDefaultAudienceToken(ctx context.Context, g Gomega, dataDir string) string {
	admin, err := kubernetes.NewForConfig(adminConfig(g, dataDir))
	g.Expect(err).NotTo(HaveOccurred())
	tr, err := admin.CoreV1().ServiceAccounts("default").CreateToken(ctx, "kurz-admin", &authenticationv1.TokenRequest{
		Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To(int64(devenv.TokenLifetime / time.Second))},
	}, metav1.CreateOptions{})
	g.Expect(err).NotTo(HaveOccurred())
	return tr.Status.Token
}

// expectKept checks that the Link and Domain of the first start survived.
func expectKept(ctx context.Context, g Gomega, dataDir string) {
	admin := adminClient(g, dataDir)
	var link kurzv1alpha1.Link
	g.Expect(admin.Get(ctx, client.ObjectKey{Namespace: "default", Name: "hello"}, &link)).To(Succeed())
	g.Expect(link.Spec.URL).To(BeEquivalentTo("https://example.com/hello"))
	g.Expect(admin.Get(ctx, client.ObjectKey{Namespace: "default", Name: "links-example-com"}, &kurzv1alpha1.Domain{})).To(Succeed())
}

// expectWorkspaceToken checks that token is a kurz API token of
// default:kurz-admin (TokenReview for audience kurz), carrying kurz-editor
// in default only, and that it is not a kube-apiserver credential.
func expectWorkspaceToken(ctx context.Context, g Gomega, dataDir, token string) {
	admin, err := kubernetes.NewForConfig(adminConfig(g, dataDir))
	g.Expect(err).NotTo(HaveOccurred())
	review, err := admin.AuthenticationV1().TokenReviews().Create(ctx, &authenticationv1.TokenReview{
		Spec: authenticationv1.TokenReviewSpec{Token: token, Audiences: []string{"kurz"}},
	}, metav1.CreateOptions{})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(review.Status.Authenticated).To(BeTrue(), review.Status.Error)
	g.Expect(review.Status.Audiences).To(Equal([]string{"kurz"}))
	user := review.Status.User
	g.Expect(user.Username).To(Equal(serviceAccountUser))

	// As a bearer credential of kube-apiserver itself, it is refused.
	asToken, err := kubernetes.NewForConfig(tokenConfig(g, dataDir, token))
	g.Expect(err).NotTo(HaveOccurred())
	_, err = asToken.AuthenticationV1().SelfSubjectReviews().Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
	g.Expect(apierrors.IsUnauthorized(err)).To(BeTrue(), "kube-apiserver answered %v", err)

	extra := map[string]authorizationv1.ExtraValue{}
	for k, v := range user.Extra {
		extra[k] = authorizationv1.ExtraValue(v)
	}
	for _, tt := range []struct {
		namespace, verb, resource string
		allowed                   bool
	}{
		{"default", "create", "links", true},
		{"default", "delete", "domains", true},
		{"default", "list", "links", true},
		{"kube-system", "create", "links", false},
		{"other", "list", "domains", false},
		{"default", "create", "secrets", false},
	} {
		group := "kurz.dev"
		if tt.resource == "secrets" {
			group = ""
		}
		review, err := admin.AuthorizationV1().SubjectAccessReviews().Create(ctx, &authorizationv1.SubjectAccessReview{
			Spec: authorizationv1.SubjectAccessReviewSpec{
				User: user.Username, UID: user.UID, Groups: user.Groups, Extra: extra,
				ResourceAttributes: &authorizationv1.ResourceAttributes{
					Namespace: tt.namespace, Verb: tt.verb, Group: group, Resource: tt.resource,
				},
			},
		}, metav1.CreateOptions{})
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(review.Status.Allowed).To(Equal(tt.allowed), "%s %s in %s", tt.verb, tt.resource, tt.namespace)
	}
}

// expectAPIToken checks that token lists the workspace's links (among
// them "hello") through the kurz API, as the banner's curl command does.
// The API reads from its cache, so a link just created shows up shortly.
func expectAPIToken(g Gomega, apiURL, token string) {
	g.Eventually(func(g Gomega) {
		req, err := http.NewRequest("GET", apiURL+"/api/v1/links", nil)
		g.Expect(err).NotTo(HaveOccurred())
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("Accept", "application/json")
		resp, err := http.DefaultClient.Do(req)
		g.Expect(err).NotTo(HaveOccurred())
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(resp.StatusCode).To(Equal(http.StatusOK), "%s", body)
		g.Expect(string(body)).To(ContainSubstring(`"key":"hello"`))
	}).WithTimeout(30 * time.Second).Should(Succeed())
}

func adminConfig(g Gomega, dataDir string) *rest.Config {
	cfg, err := clientcmd.BuildConfigFromFlags("", filepath.Join(dataDir, "kubeconfig"))
	g.Expect(err).NotTo(HaveOccurred())
	return cfg
}

func adminClient(g Gomega, dataDir string) client.Client {
	c, err := client.New(adminConfig(g, dataDir), client.Options{Scheme: testScheme})
	g.Expect(err).NotTo(HaveOccurred())
	return c
}

// tokenConfig talks to the API server of dataDir's kubeconfig as token.
func tokenConfig(g Gomega, dataDir, token string) *rest.Config {
	admin := adminConfig(g, dataDir)
	return &rest.Config{
		Host:            admin.Host,
		BearerToken:     token,
		TLSClientConfig: rest.TLSClientConfig{CAData: admin.CAData},
	}
}

func readToken(g Gomega, dataDir string) string {
	data, err := os.ReadFile(filepath.Join(dataDir, "token"))
	g.Expect(err).NotTo(HaveOccurred())
	tok := strings.TrimSpace(string(data))
	g.Expect(tok).NotTo(BeEmpty())
	return tok
}
