package manager

import (
	"context"
	"net/http"
	"net/url"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"github.com/prometheus/client_golang/prometheus/testutil"
	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kurz-dev/kurz/internal/testenv"
)

// startLeading starts one replica with leader election against c, creates
// the Domain "go" and on it the Link "first" (key "a") in ns, and waits
// until the replica leads and has reconciled the Link. It returns the
// replica's options, the running replica and the Domain's hostname.
func startLeading(t *testing.T, c *rest.Config, ns string) (Options, *running, string) {
	t.Helper()
	g := NewWithT(t)
	o := testOptions(t, newDNS(t), ns)
	o.LeaderElect = true
	m, err := New(context.Background(), c, o)
	g.Expect(err).NotTo(HaveOccurred())
	r := start(t, m, (*Manager).Start)

	host := unique("go") + ".test"
	createDomain(t, ns, "go", host)
	first := createLink(t, ns, "first", host, "a")
	g.Eventually(linkReady(first), timeout, poll).Should(Equal(linkActive), "the leader's controllers reconcile")
	g.Expect(testutil.ToFloat64(leaderGauge)).To(Equal(1.0))
	return o, r, host
}

// TestLosingTheLeaseStopsOnlyTheControllers runs one replica with leader
// election, takes its Lease away (another holder renews it) and gives it
// back: while it does not lead it keeps serving and its Start does not
// return, but it reconciles nothing; once the Lease is free again it leads
// and reconciles what it missed.
func TestLosingTheLeaseStopsOnlyTheControllers(t *testing.T) {
	testenv.Need(t)
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	o, r, host := startLeading(t, cfg, ns)

	// Another identity takes the Lease, as a replica would after this one
	// failed to renew it in time (a frozen kube-apiserver, a paused process).
	lease := &coordinationv1.Lease{}
	key := client.ObjectKey{Namespace: ns, Name: o.LeaderElectionID}
	g.Eventually(func() error {
		if err := k8sClient.Get(ctx, key, lease); err != nil {
			return err
		}
		now := metav1.NewMicroTime(time.Now())
		lease.Spec.HolderIdentity = ptr.To("another-replica")
		lease.Spec.AcquireTime, lease.Spec.RenewTime = &now, &now
		lease.Spec.LeaseDurationSeconds = ptr.To[int32](3600)
		return k8sClient.Update(ctx, lease)
	}, timeout, poll).Should(Succeed())

	stolen := time.Now()
	g.Eventually(func() float64 { return testutil.ToFloat64(leaderGauge) }, timeout, poll).Should(Equal(0.0),
		"the replica notices it no longer leads and stops its controllers")
	t.Logf("controllers stopped %s after the Lease was taken (renew deadline %s)", time.Since(stolen).Round(time.Millisecond), o.RenewDeadline)
	second := createLink(t, ns, "second", host, "b")
	g.Consistently(linkReady(second), 3*time.Second, poll).Should(BeEmpty(), "no controller runs while another replica leads")
	g.Expect(r.returned()).To(BeFalse(), "losing the Lease does not stop the manager")
	status, location := follow(o.Redirect.BindAddress, host, "a")
	g.Expect(status).To(Equal(http.StatusFound), "the redirect server keeps serving")
	g.Expect(location).To(Equal("https://example.com/a"))
	g.Expect(readyz(o.HealthProbeBindAddress)).To(Equal(http.StatusOK), "a replica that does not lead is ready")

	// The other holder goes away: the replica campaigns again and wins.
	g.Expect(k8sClient.Delete(ctx, lease)).To(Succeed())
	g.Eventually(linkReady(second), timeout, poll).Should(Equal(linkActive), "a new term's controllers reconcile")
	g.Expect(testutil.ToFloat64(leaderGauge)).To(Equal(1.0))
	g.Expect(r.returned()).To(BeFalse())

	// A clean stop releases the Lease for the next leader at once.
	r.stop()
	g.Eventually(r.done, timeout).Should(Receive(BeNil()))
	r.done <- nil // for the cleanup
	g.Expect(k8sClient.Get(ctx, key, lease)).To(Succeed())
	g.Expect(ptr.Deref(lease.Spec.HolderIdentity, "")).To(BeEmpty(), "the Lease is released on shutdown")
	g.Expect(testutil.ToFloat64(leaderGauge)).To(Equal(0.0))
}

// holder returns the identity holding the Lease ("" when none does).
func holder(key client.ObjectKey) func(Gomega) string {
	return func(g Gomega) string {
		lease := &coordinationv1.Lease{}
		g.Expect(k8sClient.Get(context.Background(), key, lease)).To(Succeed())
		return ptr.Deref(lease.Spec.HolderIdentity, "")
	}
}

// TestStandbyTakesOverFromAStoppedLeader runs two replicas: one leads, and
// when it is stopped (a rollout) it releases the Lease after its
// controllers stopped, and the standby leads and reconciles at once,
// without waiting for the lease to expire.
func TestStandbyTakesOverFromAStoppedLeader(t *testing.T) {
	testenv.Need(t)
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	srv := newDNS(t)
	shared := testOptions(t, srv, ns)
	shared.LeaderElect = true
	// A lease far longer than the test's timeout: the standby can only
	// take over in time if the leader releases it.
	shared.LeaseDuration, shared.RenewDeadline = 5*time.Minute, 2*time.Second
	replicas := map[string]*running{}
	for range 2 {
		o := shared
		o.HealthProbeBindAddress, o.API.BindAddress, o.Redirect.BindAddress = testenv.FreeAddr(t), testenv.FreeAddr(t), testenv.FreeAddr(t)
		m, err := New(ctx, cfg, o)
		g.Expect(err).NotTo(HaveOccurred())
		replicas[m.leader.identity] = start(t, m, (*Manager).Run)
	}
	key := client.ObjectKey{Namespace: ns, Name: shared.LeaderElectionID}
	g.Eventually(holder(key), timeout, poll).Should(BeKeyOf(replicas))
	leaderID := holder(key)(g)

	host := unique("go") + ".test"
	createDomain(t, ns, "go", host)
	first := createLink(t, ns, "first", host, "a")
	g.Eventually(linkReady(first), timeout, poll).Should(Equal(linkActive))

	old := replicas[leaderID]
	stopped := time.Now()
	old.stop()
	g.Eventually(old.done, timeout).Should(Receive(BeNil()))
	old.done <- nil // for the cleanup
	g.Eventually(holder(key), timeout, poll).Should(SatisfyAll(BeKeyOf(replicas), Not(Equal(leaderID))),
		"the standby takes the released Lease")
	t.Logf("the standby leads %s after the leader was stopped (retry period %s)", time.Since(stopped).Round(time.Millisecond), shared.RetryPeriod)
	second := createLink(t, ns, "second", host, "b")
	g.Eventually(linkReady(second), timeout, poll).Should(Equal(linkActive))
}

// TestFrozenControlPlaneStopsOnlyTheControllers freezes kube-apiserver (as
// seen by one leading replica) for longer than the lease: the replica stops
// its controllers but its Start does not return, it stays ready and keeps
// serving redirects from memory; when kube-apiserver thaws it leads again
// and reconciles what changed meanwhile.
func TestFrozenControlPlaneStopsOnlyTheControllers(t *testing.T) {
	testenv.Need(t)
	g := NewWithT(t)
	ns := newNamespace(t)
	apiURL, err := url.Parse(cfg.Host)
	g.Expect(err).NotTo(HaveOccurred())
	frozen := newFreezer(t, apiURL.Host)
	viaProxy := rest.CopyConfig(cfg)
	viaProxy.Host = "https://" + frozen.addr()

	o, r, host := startLeading(t, viaProxy, ns)

	frozen.freeze()
	g.Eventually(func() float64 { return testutil.ToFloat64(leaderGauge) }, timeout, poll).Should(Equal(0.0),
		"the leader cannot renew and stops its controllers")
	second := createLink(t, ns, "second", host, "b") // straight to kube-apiserver, not through the freeze
	// Through more than a whole lease duration of outage:
	g.Consistently(r.returned, o.LeaseDuration+time.Second, poll).Should(BeFalse(), "the manager keeps running")
	status, location := follow(o.Redirect.BindAddress, host, "a")
	g.Expect(status).To(Equal(http.StatusFound), "redirects are served from memory")
	g.Expect(location).To(Equal("https://example.com/a"))
	g.Expect(readyz(o.HealthProbeBindAddress)).To(Equal(http.StatusOK), "a replica serving from memory is ready")

	frozen.thaw()
	g.Eventually(linkReady(second), timeout, poll).Should(Equal(linkActive), "it leads again and catches up")
	g.Expect(testutil.ToFloat64(leaderGauge)).To(Equal(1.0))
	g.Expect(r.returned()).To(BeFalse())
}
