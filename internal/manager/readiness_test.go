package manager

import (
	"context"
	"net/http"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"

	"github.com/kurz-dev/kurz/internal/testenv"
)

// TestReadyzFollowsCachesAndShutdown checks /readyz of a replica: not ready
// while its caches cannot sync (its user may not list yet), ready once they
// have, and not ready as soon as shutdown begins while it still serves for
// the shutdown delay; then it stops.
func TestReadyzFollowsCachesAndShutdown(t *testing.T) {
	testenv.Need(t)
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	o := testOptions(t, newDNS(t), ns)
	o.EnableControllers = false
	// Long enough for the few requests below to land inside it.
	o.ShutdownDelay = 10 * time.Second
	probes := o.HealthProbeBindAddress

	// The replica runs as a user without rights, so its informers' lists
	// are refused and its caches cannot sync.
	user := unique("kurz-readyz")
	userCfg := rest.CopyConfig(cfg)
	userCfg.Impersonate = rest.ImpersonationConfig{UserName: user}
	m, err := New(ctx, userCfg, o)
	g.Expect(err).NotTo(HaveOccurred())
	r := start(t, m, (*Manager).Run)

	g.Eventually(func() int { return readyz(probes) }, timeout, poll).Should(Equal(http.StatusInternalServerError),
		"the probes answer before the caches sync, and say not ready")
	g.Consistently(func() int { return readyz(probes) }, 2*time.Second, poll).Should(Equal(http.StatusInternalServerError))

	// Grant what the informers need: the caches sync and it is ready.
	role := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: user}, Rules: []rbacv1.PolicyRule{
		{APIGroups: []string{"kurz.dev"}, Resources: []string{"links", "domains", "webhooks"}, Verbs: []string{"get", "list", "watch"}},
		{APIGroups: []string{""}, Resources: []string{"namespaces"}, Verbs: []string{"get", "list", "watch"}},
		// Webhook delivery (on by default) caches the labelled signing
		// Secrets.
		{APIGroups: []string{""}, Resources: []string{"secrets"}, Verbs: []string{"list", "watch"}},
	}}
	binding := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: user},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: user},
		Subjects: []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: user}}}
	g.Expect(k8sClient.Create(ctx, role)).To(Succeed())
	g.Expect(k8sClient.Create(ctx, binding)).To(Succeed())
	t.Cleanup(func() {
		_ = k8sClient.Delete(context.Background(), binding)
		_ = k8sClient.Delete(context.Background(), role)
	})
	g.Eventually(func() int { return readyz(probes) }, timeout, poll).Should(Equal(http.StatusOK))

	host := unique("go") + ".test"
	createDomain(t, ns, "go", host)
	createLink(t, ns, "a", host, "a")
	g.Eventually(func() int { s, _ := follow(o.Redirect.BindAddress, host, "a"); return s }, timeout, poll).
		Should(Equal(http.StatusFound))

	// SIGTERM: not ready at once, still serving during the delay.
	r.stop()
	g.Eventually(func() int { return readyz(probes) }, timeout, poll).Should(Equal(http.StatusInternalServerError))
	status, location := follow(o.Redirect.BindAddress, host, "a")
	g.Expect(status).To(Equal(http.StatusFound), "requests are served during the shutdown delay")
	g.Expect(location).To(Equal("https://example.com/a"))
	g.Expect(r.returned()).To(BeFalse(), "the manager runs on through the delay")

	// After the delay it drains and stops: nothing listens any more.
	g.Eventually(r.done, timeout).Should(Receive(BeNil()))
	r.done <- nil // for the cleanup
	status, _ = follow(o.Redirect.BindAddress, host, "a")
	g.Expect(status).To(BeZero(), "the redirect listener is closed")
	g.Expect(readyz(probes)).To(BeZero(), "the probe listener is closed")
}
