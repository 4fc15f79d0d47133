package controllers_test

import (
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	kurzv1alpha1 "github.com/kurz-dev/kurz/api/v1alpha1"
	"github.com/kurz-dev/kurz/controllers"
	"github.com/kurz-dev/kurz/internal/claims"
	"github.com/kurz-dev/kurz/internal/fieldindex"
	"github.com/kurz-dev/kurz/internal/testenv"
)

// TestDomainEventsEnqueueOnlyAffectedLinks: a tenant churning a Domain that
// owns nothing (a squatter's) makes the Link controller reconcile its own
// Links only, not the owner's; an event that moves the hostname also
// reconciles the Links of the namespace that lost it.
func TestDomainEventsEnqueueOnlyAffectedLinks(t *testing.T) {
	testenv.Need(t)
	g := NewWithT(t)
	mgr := newManager(t, cfg, testOptions(newDNS(t)), nil)
	start(t, mgr)
	hostname := host(t, "go.fair.test")
	nsV, nsB := newNamespace(t, "fair"), newNamespace(t, "fair")

	victim := createDomain(g, nsV, "d", hostname, pending)
	squat := createDomain(g, nsB, "d", hostname, claimed)
	for _, l := range []*kurzv1alpha1.Link{newLink(nsV, "a", hostname, "a"), newLink(nsV, "b", hostname, "b"), newLink(nsB, "x", hostname, "x")} {
		g.Expect(k8sClient.Create(ctx, l)).To(Succeed())
		g.Eventually(readyOf(l), timeout, poll).ShouldNot(BeEmpty())
	}
	links, err := fieldindex.NewLinks(ctx, mgr.GetCache())
	g.Expect(err).NotTo(HaveOccurred())
	// The manager's cache holds all three links (Links are found by
	// domain per namespace only).
	g.Eventually(func(g Gomega) int {
		n := 0
		for _, ns := range []string{nsV, nsB} {
			names, err := links.OnDomain(ns, hostname)
			g.Expect(err).NotTo(HaveOccurred())
			n += len(names)
		}
		return n
	}, timeout, poll).Should(Equal(3))

	names := func(reqs []reconcile.Request) []string {
		var out []string
		for _, r := range reqs {
			out = append(out, r.Namespace+"/"+r.Name)
		}
		return out
	}
	r := &controllers.LinkReconciler{Client: mgr.GetClient(), Links: links}
	// The first event of a hostname reconciles its owner's Links once.
	g.Expect(names(r.LinksOfDomain(ctx, squat))).To(ConsistOf(nsB+"/x", nsV+"/a", nsV+"/b"))
	// Then the squatter's churn touches its own Links only.
	for range 3 {
		g.Expect(names(r.LinksOfDomain(ctx, squat))).To(ConsistOf(nsB + "/x"))
	}

	// The victim's Domain goes: the hostname moves to nobody (the squatter
	// being contested), so the victim's Links are reconciled, and the
	// squatter's, which now wait for TXT proof instead of being stalled.
	// Then again the squatter's Links only when its own Domain changes.
	g.Expect(k8sClient.Delete(ctx, victim)).To(Succeed())
	g.Eventually(func(g Gomega) int {
		var domains kurzv1alpha1.DomainList
		g.Expect(mgr.GetClient().List(ctx, &domains, client.MatchingFields{"spec.domain": hostname})).To(Succeed())
		return len(domains.Items)
	}, timeout, poll).Should(Equal(1))
	g.Expect(names(r.LinksOfDomain(ctx, victim))).To(ConsistOf(nsV+"/a", nsV+"/b", nsB+"/x"))
	for range 3 {
		g.Expect(names(r.LinksOfDomain(ctx, squat))).To(ConsistOf(nsB + "/x"))
	}
}

// TestSlowZoneDoesNotStarveVerification: Domains of a zone whose servers
// never answer hold at most --dns-zone-checks workers (here 1 of 2), so a
// Domain of another zone is verified while they wait. Without the bound
// both workers sit on the slow zone for the whole DNS timeout, longer than
// this test waits.
func TestSlowZoneDoesNotStarveVerification(t *testing.T) {
	testenv.Need(t)
	g := NewWithT(t)
	srv := newDNS(t)
	o := testOptions(srv)
	o.DNS.Timeout = 3 * timeout
	o.DomainWorkers, o.DNS.ZoneConcurrency = 2, 1
	start(t, newManager(t, cfg, o, nil))
	ns := newNamespace(t, "slowzone")

	slowZone := host(t, "slow.test")
	srv.Delay(slowZone, time.Hour)
	for _, name := range []string{"a", "b", "c"} {
		g.Expect(k8sClient.Create(ctx, newDomain(ns, name, name+"."+slowZone))).To(Succeed())
	}
	fast := newDomain(ns, "fast", host(t, "go.fast.test"))
	srv.Set("_kurz-challenge."+string(fast.Spec.Domain), dnsTypeTXT, claims.ChallengeValue(nsUID(t, ns), string(fast.Spec.Domain)))
	createReady(g, fast, verified)
}

// nsUID returns the uid of namespace ns.
func nsUID(t *testing.T, ns string) types.UID {
	t.Helper()
	var n corev1.Namespace
	NewWithT(t).Expect(k8sClient.Get(ctx, types.NamespacedName{Name: ns}, &n)).To(Succeed())
	return n.UID
}
