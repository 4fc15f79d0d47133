package config_test

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kurz-dev/kurz/config"
	"github.com/kurz-dev/kurz/internal/testenv"
)

// access is one request the manager's ServiceAccount makes (or must not be
// able to make).
type access struct {
	group, resource, subresource, verb, namespace string
}

// managerNeeds is every request the kurz manager's code makes: the
// controllers, the API server, the redirect server and leader election.
var managerNeeds = []access{
	{"kurz.dev", "links", "", "get", "team-a"},
	{"kurz.dev", "links", "", "list", ""},
	{"kurz.dev", "links", "", "watch", ""},
	{"kurz.dev", "links", "", "create", "team-a"},
	{"kurz.dev", "links", "", "update", "team-a"},
	{"kurz.dev", "links", "", "delete", "team-a"},
	{"kurz.dev", "links", "status", "patch", "team-a"},
	{"kurz.dev", "domains", "", "get", "team-a"},
	{"kurz.dev", "domains", "", "list", ""},
	{"kurz.dev", "domains", "", "watch", ""},
	{"kurz.dev", "domains", "", "create", "team-a"},
	{"kurz.dev", "domains", "", "update", "team-a"},
	{"kurz.dev", "domains", "", "delete", "team-a"},
	{"kurz.dev", "domains", "status", "patch", "team-a"},
	{"kurz.dev", "webhooks", "", "get", "team-a"},
	{"kurz.dev", "webhooks", "", "list", ""},
	{"kurz.dev", "webhooks", "", "watch", ""},
	{"kurz.dev", "webhooks", "", "create", "team-a"},
	{"kurz.dev", "webhooks", "", "update", "team-a"},
	{"kurz.dev", "webhooks", "", "delete", "team-a"},
	{"kurz.dev", "webhooks", "status", "patch", "team-a"},
	// Webhook signing Secrets: listed and watched cluster-wide (RBAC cannot
	// grant by label); the cache asks for the labelled ones only.
	{"", "secrets", "", "list", ""},
	{"", "secrets", "", "watch", ""},
	{"events.k8s.io", "events", "", "create", "team-a"},
	{"events.k8s.io", "events", "", "patch", "team-a"},
	{"", "namespaces", "", "get", ""},
	{"", "namespaces", "", "list", ""},
	{"", "namespaces", "", "watch", ""},
	{"authentication.k8s.io", "tokenreviews", "", "create", ""},
	{"authorization.k8s.io", "subjectaccessreviews", "", "create", ""},
	{"coordination.k8s.io", "leases", "", "get", "kurz-system"},
	{"coordination.k8s.io", "leases", "", "create", "kurz-system"},
	{"coordination.k8s.io", "leases", "", "update", "kurz-system"},
	{"", "events", "", "create", "kurz-system"},
	// The Ingress controller, in kurz's own namespace only.
	{"networking.k8s.io", "ingresses", "", "create", "kurz-system"},
	{"networking.k8s.io", "ingresses", "", "update", "kurz-system"},
	{"networking.k8s.io", "ingresses", "", "delete", "kurz-system"},
	{"networking.k8s.io", "ingresses", "", "watch", "kurz-system"},
	{"", "secrets", "", "list", "kurz-system"},
	{"", "secrets", "", "watch", "kurz-system"},
	// The analytics salt Secret is created in kurz's namespace; RBAC
	// cannot limit create to a name (the object has none yet).
	{"", "secrets", "", "create", "kurz-system"},
	{"cert-manager.io", "certificates", "", "list", "kurz-system"},
	{"cert-manager.io", "certificates", "", "watch", "kurz-system"},
	// The Gateway API's objects, in kurz's own namespace only.
	{"gateway.networking.k8s.io", "httproutes", "", "create", "kurz-system"},
	{"gateway.networking.k8s.io", "httproutes", "", "update", "kurz-system"},
	{"gateway.networking.k8s.io", "httproutes", "", "delete", "kurz-system"},
	{"gateway.networking.k8s.io", "httproutes", "", "list", "kurz-system"},
	{"gateway.networking.k8s.io", "gateways", "", "create", "kurz-system"},
	{"gateway.networking.k8s.io", "gateways", "", "update", "kurz-system"},
	{"gateway.networking.k8s.io", "gateways", "", "delete", "kurz-system"},
	{"gateway.networking.k8s.io", "gateways", "", "watch", "kurz-system"},
	{"gateway.networking.k8s.io", "listenersets", "", "create", "kurz-system"},
	{"gateway.networking.k8s.io", "listenersets", "", "update", "kurz-system"},
	{"gateway.networking.k8s.io", "listenersets", "", "delete", "kurz-system"},
	{"gateway.networking.k8s.io", "listenersets", "", "list", "kurz-system"},
}

// managerMustNot are requests no kurz code makes: granting them would only
// widen what a stolen manager token can do.
var managerMustNot = []access{
	{"kurz.dev", "links", "status", "update", "team-a"},
	{"kurz.dev", "links", "status", "get", "team-a"},
	{"kurz.dev", "domains", "status", "update", "team-a"},
	{"kurz.dev", "links", "", "patch", "team-a"},
	{"kurz.dev", "domains", "", "patch", "team-a"},
	{"kurz.dev", "links", "", "deletecollection", "team-a"},
	{"kurz.dev", "webhooks", "status", "update", "team-a"},
	{"kurz.dev", "webhooks", "", "patch", "team-a"},
	{"", "secrets", "", "get", "team-a"},
	{"", "secrets", "", "create", "team-a"},
	{"", "secrets", "", "update", "team-a"},
	// Only kurz-analytics-salt may be updated (by name); an unnamed
	// update is refused.
	{"", "secrets", "", "update", "kurz-system"},
	{"networking.k8s.io", "ingresses", "", "list", ""},
	{"networking.k8s.io", "ingresses", "", "create", "team-a"},
	{"cert-manager.io", "certificates", "", "create", "kurz-system"},
	{"cert-manager.io", "certificates", "", "list", "team-a"},
	{"gateway.networking.k8s.io", "gateways", "", "list", ""},
	{"gateway.networking.k8s.io", "gateways", "", "get", "infra"},
	{"gateway.networking.k8s.io", "httproutes", "", "create", "team-a"},
	{"gateway.networking.k8s.io", "listenersets", "", "create", "team-a"},
	{"gateway.networking.k8s.io", "gatewayclasses", "", "get", ""},
	{"", "namespaces", "", "create", ""},
	{"", "namespaces", "", "delete", ""},
	{"", "configmaps", "", "get", "kurz-system"},
	{"coordination.k8s.io", "leases", "", "update", "team-a"},
	{"", "events", "", "create", "team-a"},
	{"rbac.authorization.k8s.io", "clusterroles", "", "escalate", ""},
	{"", "serviceaccounts", "token", "create", "kurz-system"},
}

// TestManagerServiceAccountHasLeastPrivilege applies config/rbac and asks the
// API server, impersonating the ServiceAccount kurz-system/kurz-manager,
// whether it may make each request: everything the code needs is allowed and
// nothing more.
func TestManagerServiceAccountHasLeastPrivilege(t *testing.T) {
	testenv.Need(t)
	g := NewWithT(t)
	ctx := context.Background()
	applyRBAC(t)

	// Impersonating the ServiceAccount's user name gives it the groups a real
	// token of it has (system:serviceaccounts, system:serviceaccounts:kurz-system,
	// system:authenticated), so the bindings are evaluated as in a cluster.
	saCfg := rest.CopyConfig(cfg)
	saCfg.Impersonate = rest.ImpersonationConfig{UserName: "system:serviceaccount:kurz-system:kurz-manager"}
	sa, err := client.New(saCfg, client.Options{Scheme: k8s.Scheme()})
	g.Expect(err).NotTo(HaveOccurred())

	allowed := func(a access) (bool, error) {
		review := &authorizationv1.SelfSubjectAccessReview{Spec: authorizationv1.SelfSubjectAccessReviewSpec{
			ResourceAttributes: &authorizationv1.ResourceAttributes{
				Group: a.group, Resource: a.resource, Subresource: a.subresource, Verb: a.verb, Namespace: a.namespace,
			},
		}}
		if err := sa.Create(ctx, review); err != nil {
			return false, err
		}
		return review.Status.Allowed, nil
	}

	// The API server's RBAC authorizer learns of new bindings through an
	// informer, so the allowed requests are polled. Checking them first also
	// makes sure the denials below come from the applied rules, not from
	// bindings the authorizer has yet to see.
	for _, a := range managerNeeds {
		g.Eventually(func() (bool, error) { return allowed(a) }).WithTimeout(30*time.Second).
			Should(BeTrue(), "kurz-manager may %s %s/%s in %q", a.verb, a.resource, a.subresource, a.namespace)
	}
	for _, a := range managerMustNot {
		g.Expect(allowed(a)).To(BeFalse(), "kurz-manager may not %s %s/%s in %q", a.verb, a.resource, a.subresource, a.namespace)
	}
}

// TestMetricsReaderMayOnlyScrape: a ServiceAccount bound to
// kurz-metrics-reader may get /metrics and nothing else kurz serves or
// stores; the manager's own ServiceAccount may not scrape.
func TestMetricsReaderMayOnlyScrape(t *testing.T) {
	testenv.Need(t)
	g := NewWithT(t)
	ctx := context.Background()
	applyRBAC(t)
	binding := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "test-metrics-reader"},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "kurz-metrics-reader"},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: "monitoring", Name: "prometheus"}}}
	g.Expect(k8s.Create(ctx, binding)).To(Succeed())
	t.Cleanup(func() { _ = k8s.Delete(context.Background(), binding) })

	may := func(user string, attrs authorizationv1.SubjectAccessReviewSpec) func() (bool, error) {
		return func() (bool, error) {
			attrs.User = user
			review := &authorizationv1.SubjectAccessReview{Spec: attrs}
			if err := k8s.Create(ctx, review); err != nil {
				return false, err
			}
			return review.Status.Allowed, nil
		}
	}
	scrape := authorizationv1.SubjectAccessReviewSpec{NonResourceAttributes: &authorizationv1.NonResourceAttributes{Path: "/metrics", Verb: "get"}}
	prometheus := "system:serviceaccount:monitoring:prometheus"
	g.Eventually(may(prometheus, scrape)).WithTimeout(30 * time.Second).Should(BeTrue())
	for _, other := range []authorizationv1.SubjectAccessReviewSpec{
		{NonResourceAttributes: &authorizationv1.NonResourceAttributes{Path: "/metrics", Verb: "post"}},
		{NonResourceAttributes: &authorizationv1.NonResourceAttributes{Path: "/healthz", Verb: "get"}},
		{ResourceAttributes: &authorizationv1.ResourceAttributes{Group: "kurz.dev", Resource: "links", Verb: "list"}},
		{ResourceAttributes: &authorizationv1.ResourceAttributes{Resource: "secrets", Verb: "get", Namespace: "kurz-system"}},
	} {
		g.Expect(may(prometheus, other)()).To(BeFalse(), "%+v", other)
	}
	g.Expect(may("system:serviceaccount:kurz-system:kurz-manager", scrape)()).To(BeFalse())
}

// applyRBAC creates the objects of `kubectl kustomize config/rbac` (and the
// namespace kurz-system they live in) and deletes them when the test ends.
func applyRBAC(t *testing.T) {
	t.Helper()
	g := NewWithT(t)
	ctx := context.Background()

	// The namespace stays: without a namespace controller, envtest never
	// finishes deleting one.
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "kurz-system"}}
	if err := k8s.Create(ctx, ns); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	objs := decodeAll(t, bytes.NewReader(kustomize(t, "rbac")))
	g.Expect(objs).NotTo(BeEmpty())
	for _, o := range objs {
		g.Expect(k8s.Create(ctx, o)).To(Succeed(), "create %s %s", o.GetKind(), o.GetName())
		t.Cleanup(func() {
			if err := k8s.Delete(ctx, o); err != nil && !apierrors.IsNotFound(err) {
				t.Errorf("delete %s %s: %v", o.GetKind(), o.GetName(), err)
			}
		})
	}
}

// TestUserRolesDoNotAggregateIntoView guards the embedded user roles: the
// built-in `view` role must not gain kurz-viewer, because Links carry
// password hashes (as `view` leaves out Secrets); `edit` gains kurz-editor.
// envtest runs no role aggregation controller, so the labels are checked.
func TestUserRolesDoNotAggregateIntoView(t *testing.T) {
	g := NewWithT(t)
	aggregatesTo := map[string][]string{}
	for _, o := range decodeAll(t, bytes.NewReader(config.UserRoles)) {
		for label, value := range o.GetLabels() {
			if role, ok := strings.CutPrefix(label, "rbac.authorization.k8s.io/aggregate-to-"); ok && value == "true" {
				aggregatesTo[o.GetName()] = append(aggregatesTo[o.GetName()], role)
			}
		}
	}
	g.Expect(aggregatesTo).To(Equal(map[string][]string{"kurz-editor": {"edit"}}))
}
