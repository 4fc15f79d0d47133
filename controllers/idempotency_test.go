package controllers_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	kurzv1alpha1 "github.com/kurz-dev/kurz/api/v1alpha1"
	"github.com/kurz-dev/kurz/controllers"
	"github.com/kurz-dev/kurz/internal/dns"
	"github.com/kurz-dev/kurz/internal/fieldindex"
	"github.com/kurz-dev/kurz/internal/testenv"
)

// countingClient counts every write that goes through it.
type countingClient struct {
	client.Client
	writes *atomic.Int64
}

func (c countingClient) Create(ctx context.Context, o client.Object, opts ...client.CreateOption) error {
	c.writes.Add(1)
	return c.Client.Create(ctx, o, opts...)
}

func (c countingClient) Update(ctx context.Context, o client.Object, opts ...client.UpdateOption) error {
	c.writes.Add(1)
	return c.Client.Update(ctx, o, opts...)
}

func (c countingClient) Patch(ctx context.Context, o client.Object, p client.Patch, opts ...client.PatchOption) error {
	c.writes.Add(1)
	return c.Client.Patch(ctx, o, p, opts...)
}

func (c countingClient) Status() client.SubResourceWriter {
	return countingStatus{SubResourceWriter: c.Client.Status(), writes: c.writes}
}

type countingStatus struct {
	client.SubResourceWriter
	writes *atomic.Int64
}

func (s countingStatus) Update(ctx context.Context, o client.Object, opts ...client.SubResourceUpdateOption) error {
	s.writes.Add(1)
	return s.SubResourceWriter.Update(ctx, o, opts...)
}

func (s countingStatus) Patch(ctx context.Context, o client.Object, p client.Patch, opts ...client.SubResourcePatchOption) error {
	s.writes.Add(1)
	return s.SubResourceWriter.Patch(ctx, o, p, opts...)
}

// resourceVersions fetches each object and returns its resourceVersion.
func resourceVersions(g Gomega, objs ...client.Object) []string {
	out := make([]string, len(objs))
	for i, o := range objs {
		g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(o), o)).To(Succeed())
		out[i] = o.GetResourceVersion()
	}
	return out
}

// TestSettledObjectsGetNoWrites reconciles settled Links and Domains again,
// directly and through watch events, and counts the writes they receive:
// none.
func TestSettledObjectsGetNoWrites(t *testing.T) {
	testenv.Need(t)
	g := NewWithT(t)
	srv := newDNS(t)
	o := testOptions(srv)
	// Long DNS waits: a due check writes lastCheckTime by design.
	o.DNSRecheckInterval, o.PendingBackoff, o.PendingBackoffMax = time.Hour, time.Hour, time.Hour
	mgr := newManager(t, cfg, o, nil)
	start(t, mgr)
	ns, other := newNamespace(t, "idem"), newNamespace(t, "idem")
	hostname := host(t, "go.idem.test")

	pendingDomain := newDomain(ns, "pending", host(t, "pending.idem.test"))
	g.Expect(k8sClient.Create(ctx, pendingDomain)).To(Succeed())
	d := createDomain(g, ns, "go", hostname, pending)
	srv.Set("_kurz-challenge."+hostname, dnsTypeTXT, d.Status.VerificationToken)
	// Spec change forces a check (and shows updatedAt is stamped).
	d.Spec.NotFoundURL = ptrTo(kurzv1alpha1.URL("https://example.com/404"))
	g.Expect(k8sClient.Update(ctx, d)).To(Succeed())
	g.Eventually(readyOf(d), timeout, poll).Should(Equal(verified))

	active := newLink(ns, "active", hostname, "a")
	expiring := newLink(ns, "expiring", hostname, "e")
	expiring.Spec.ExpiresAt = &metav1.Time{Time: time.Now().Add(time.Hour)}
	expired := newLink(ns, "expired", hostname, "x")
	expired.Spec.ExpiresAt = &metav1.Time{Time: time.Now().Add(-time.Hour)}
	loser := newLink(ns, "loser", hostname, "a")
	lost := newLink(ns, "lost", host(t, "nowhere.idem.test"), "a")
	for _, l := range []*kurzv1alpha1.Link{active, expiring, expired, lost} {
		g.Expect(k8sClient.Create(ctx, l)).To(Succeed())
	}
	g.Eventually(readyOf(active), timeout, poll).Should(Equal(linkActive))
	g.Expect(k8sClient.Create(ctx, loser)).To(Succeed())
	want := map[*kurzv1alpha1.Link]string{
		active: linkActive, expiring: linkActive, expired: linkExpired,
		loser: linkKeyConflict, lost: linkDomainNotFound,
	}
	for l, reason := range want {
		g.Eventually(readyOf(l), timeout, poll).Should(Equal(reason), l.Name)
	}
	g.Eventually(readyOf(pendingDomain), timeout, poll).Should(Equal(pending))
	// Both Domains share a zone, checked one at a time (--dns-zone-checks):
	// settled means checked.
	for _, dom := range []*kurzv1alpha1.Domain{d, pendingDomain} {
		g.Eventually(func(g Gomega) *metav1.Time {
			readyOf(dom)(g)
			return dom.Status.LastCheckTime
		}, timeout, poll).ShouldNot(BeNil())
	}
	settled := []client.Object{d, pendingDomain, active, expiring, expired, loser, lost}
	before := resourceVersions(g, settled...)

	// Direct reconciles, through a client that counts writes.
	var writes atomic.Int64
	c := countingClient{Client: mgr.GetClient(), writes: &writes}
	verifier, err := dns.New(srv.Options())
	g.Expect(err).NotTo(HaveOccurred())
	links, err := fieldindex.NewLinks(ctx, mgr.GetCache())
	g.Expect(err).NotTo(HaveOccurred())
	lr := &controllers.LinkReconciler{Client: c, Links: links, Now: time.Now}
	dr := &controllers.DomainReconciler{Client: c, Verifier: verifier, Now: time.Now,
		Schedule: controllers.Schedule{Recheck: time.Hour, Backoff: time.Hour, BackoffMax: time.Hour}}
	for range 3 {
		for _, obj := range settled {
			req := reconcile.Request{NamespacedName: client.ObjectKeyFromObject(obj)}
			var res reconcile.Result
			if _, ok := obj.(*kurzv1alpha1.Domain); ok {
				res, err = dr.Reconcile(ctx, req)
				g.Expect(res.RequeueAfter).To(BeNumerically(">", 50*time.Minute), "the next DNS check is an hour away")
			} else {
				res, err = lr.Reconcile(ctx, req)
			}
			g.Expect(err).NotTo(HaveOccurred())
			if obj == expiring {
				g.Expect(res.RequeueAfter).To(BeNumerically("~", time.Hour, time.Minute), "requeued for its expiry")
			}
		}
	}
	g.Expect(writes.Load()).To(BeZero())
	g.Expect(srv.Queries()).To(BeNumerically(">", 0))
	queries := srv.Queries()

	// Reconciles caused by watch events: a newer claim of the hostname in
	// another namespace (reaches the Domain and every Link of the
	// hostname), another loser of key "a", a Domain spec change.
	rival := newDomain(other, "go", hostname)
	g.Expect(k8sClient.Create(ctx, rival)).To(Succeed())
	loser2 := newLink(ns, "loser2", hostname, "a")
	g.Expect(k8sClient.Create(ctx, loser2)).To(Succeed())
	g.Eventually(readyOf(rival), timeout, poll).Should(Equal(claimed))
	g.Eventually(readyOf(loser2), timeout, poll).Should(Equal(linkKeyConflict))
	// The rival itself is checked (its TXT record could move the hostname
	// to it), so DNS queries go on; the settled Domain is not: a check
	// would rewrite its lastCheckTime (seconds after the last one), and
	// so its resourceVersion.
	g.Consistently(func(g Gomega) []string { return resourceVersions(g, settled...) }, "2s", 200*time.Millisecond).Should(Equal(before))
	g.Expect(srv.Queries()).To(BeNumerically(">=", queries))

	// The counter can count: status drift (a write that triggers no
	// reconcile) is repaired by the next pass, in one write.
	drifted := active.DeepCopy()
	drifted.Status.ShortURL = "https://drift/x"
	g.Expect(k8sClient.Status().Patch(ctx, drifted, client.MergeFrom(active))).To(Succeed())
	g.Eventually(func(g Gomega) string {
		var cached kurzv1alpha1.Link
		g.Expect(mgr.GetClient().Get(ctx, client.ObjectKeyFromObject(active), &cached)).To(Succeed())
		return cached.Status.ShortURL
	}, timeout, poll).Should(Equal("https://drift/x"))
	_, err = lr.Reconcile(ctx, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(active)})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(writes.Load()).To(Equal(int64(1)))
	g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(active), active)).To(Succeed())
	g.Expect(active.Status.ShortURL).To(Equal("https://" + hostname + "/a"))
}

func ptrTo[T any](v T) *T { return &v }
