package controllers_test

import (
	"context"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	kurzv1alpha1 "github.com/kurz-dev/kurz/api/v1alpha1"
	"github.com/kurz-dev/kurz/controllers"
	"github.com/kurz-dev/kurz/internal/dns"
	"github.com/kurz-dev/kurz/internal/fieldindex"
	"github.com/kurz-dev/kurz/internal/testenv"
)

// TestLateDomainStatusIsRefused: a Domain status computed from an older
// resourceVersion (a leader that lost its Lease while its pass ran, or
// read a cache behind) is refused by kube-apiserver rather than written
// over the newer DNS proof the next leader recorded meanwhile. The pass
// asks to run again shortly, without an error (conflicts are expected).
func TestLateDomainStatusIsRefused(t *testing.T) {
	testenv.Need(t)
	g := NewWithT(t)
	srv := newDNS(t)
	ns := newNamespace(t, "late")
	hostname := host(t, "go.late.test")
	d := newDomain(ns, "go", hostname)
	g.Expect(k8sClient.Create(ctx, d)).To(Succeed())
	key := client.ObjectKeyFromObject(d)

	// The controller's reads come from a cache with its field indexes.
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{Scheme: scheme, Metrics: metricsserver.Options{BindAddress: "0"}, HealthProbeBindAddress: "0"})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(fieldindex.Setup(ctx, mgr.GetFieldIndexer())).To(Succeed())
	start(t, mgr)
	cached := mgr.GetClient()
	g.Eventually(func() error { return cached.Get(ctx, key, &kurzv1alpha1.Domain{}) }, timeout, poll).Should(Succeed())

	verifier, err := dns.New(srv.Options(targetHost))
	g.Expect(err).NotTo(HaveOccurred())
	now := time.Now()
	r := &controllers.DomainReconciler{
		Client:   cached,
		Recorder: events.NewFakeRecorder(10),
		Verifier: verifier,
		Schedule: controllers.Schedule{Recheck: time.Hour, Backoff: time.Minute, BackoffMax: time.Hour},
		Now:      func() time.Time { return now },
	}
	_, err = r.Reconcile(ctx, reconcile.Request{NamespacedName: key})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(k8sClient.Get(ctx, key, d)).To(Succeed())
	g.Expect(d.Status.Claim.Proof).To(Equal(kurzv1alpha1.ProofNone), "nothing in DNS yet")
	stale := d.DeepCopy()

	// The next leader finds the TXT record and records it.
	proven := d.DeepCopy()
	proven.Status.Claim.Proof = kurzv1alpha1.ProofTXT
	g.Expect(k8sClient.Status().Patch(ctx, proven, client.MergeFrom(d))).To(Succeed())

	// The old leader's pass reads the Domain as it was, checks DNS (a day
	// later: due), finds a CNAME to a redirect target and would record
	// that proof instead.
	srv.Set(hostname, dnsTypeCNAME, targetHost)
	now = now.Add(24 * time.Hour)
	r.Client = staleDomain{Client: cached, stale: stale}
	res, err := r.Reconcile(ctx, reconcile.Request{NamespacedName: key})
	g.Expect(err).NotTo(HaveOccurred(), "a conflict is no error")
	g.Expect(k8sClient.Get(ctx, key, d)).To(Succeed())
	g.Expect(d.Status.Claim.Proof).To(Equal(kurzv1alpha1.ProofTXT), "the newer proof stays")
	g.Expect(d.ResourceVersion).To(Equal(proven.ResourceVersion), "nothing written")
	g.Expect(res.RequeueAfter).To(And(BeNumerically(">", 0), BeNumerically("<=", time.Second)), "runs again shortly")

	// Read afresh, the pass writes.
	g.Eventually(func(g Gomega) string {
		var seen kurzv1alpha1.Domain
		g.Expect(cached.Get(ctx, key, &seen)).To(Succeed())
		return seen.ResourceVersion
	}, timeout, poll).Should(Equal(proven.ResourceVersion))
	r.Client = cached
	_, err = r.Reconcile(ctx, reconcile.Request{NamespacedName: key})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(k8sClient.Get(ctx, key, d)).To(Succeed())
	g.Expect(d.Status.LastCheckTime.Time).To(Equal(now.Truncate(time.Second)))
}

// staleDomain reads one Domain as it was (a cache behind); everything else
// goes to Client.
type staleDomain struct {
	client.Client
	stale *kurzv1alpha1.Domain
}

func (c staleDomain) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	if d, ok := obj.(*kurzv1alpha1.Domain); ok && key == client.ObjectKeyFromObject(c.stale) {
		c.stale.DeepCopyInto(d)
		return nil
	}
	return c.Client.Get(ctx, key, obj, opts...)
}
