package controllers_test

import (
	"fmt"
	"strconv"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kurzv1alpha1 "github.com/kurz-dev/kurz/api/v1alpha1"
	"github.com/kurz-dev/kurz/internal/testenv"
)

// claimOf fetches d and returns its claim (nil when unset).
func claimOf(d *kurzv1alpha1.Domain) func(Gomega) *kurzv1alpha1.DomainClaim {
	return func(g Gomega) *kurzv1alpha1.DomainClaim {
		g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(d), d)).To(Succeed())
		return d.Status.Claim
	}
}

// TestSquatterNeverInheritsHostname is the takeover of issue 10: a tenant
// applies (with kubectl) a Domain for a victim's hostname, whose DNS points
// at kurz (so a CNAME "proves" any Domain of it). Whatever the victim does
// with its Domain (delete, rename, recreate, a GitOps prune and recreate
// under another name), the squatter's Domain never owns the hostname and
// its links never serve; the victim's new Domain gets its hostname back.
func TestSquatterNeverInheritsHostname(t *testing.T) {
	testenv.Need(t)
	g := NewWithT(t)
	srv := startControllers(t)
	hostname := targetedHost(t, srv, "links.victim.test")
	nsV, nsB := newNamespace(t, "victim"), newNamespace(t, "squat")

	victim := createDomain(g, nsV, "links", hostname, verified)
	g.Expect(victim.Status.Claim.Contested).To(BeFalse())
	g.Expect(victim.Status.Claim.Proof).To(Equal(kurzv1alpha1.ProofTarget))
	victimLink := newLink(nsV, "l", hostname, "k")
	createReady(g, victimLink, linkActive)

	squat := createDomain(g, nsB, "links", hostname, claimed)
	g.Expect(squat.Status.Claim.Contested).To(BeTrue())
	// The condition says what would move the hostname: the squatter's own
	// record, which only the DNS owner can publish.
	g.Expect(squat.Status.Conditions[0].Message).To(ContainSubstring(squat.Status.Record.Name))
	g.Expect(squat.Status.Conditions[0].Message).To(ContainSubstring(squat.Status.Record.Value))
	g.Expect(squat.Status.Conditions[0].Message).NotTo(ContainSubstring(nsV))
	squatLink := newLink(nsB, "l", hostname, "k")
	createReady(g, squatLink, linkDomainNotFound)

	// neverServes: with the hostname free, the squatter's Domain waits for
	// its TXT record; it and its link stay out, for a while.
	neverServes := func(g Gomega) {
		g.Eventually(readyOf(squat), timeout, poll).Should(Equal(txtRequired))
		g.Consistently(func(g Gomega) []string {
			return []string{readyOf(squat)(g), readyOf(squatLink)(g)}
		}, "1500ms", poll).Should(Equal([]string{txtRequired, linkDomainNotFound}))
		g.Expect(squat.Status.Phase).To(Equal(kurzv1alpha1.DomainPending))
		g.Expect(squat.Status.Claim.Contested).To(BeTrue(), "kept for good")
		g.Expect(squatLink.Status.Conditions[0].Message).To(ContainSubstring("does not own its hostname"))
	}
	// victimBack: a Domain of the victim's workspace takes the hostname.
	victimBack := func(g Gomega, d *kurzv1alpha1.Domain) {
		g.Eventually(readyOf(d), timeout, poll).Should(Equal(verified))
		g.Expect(d.Status.Claim.Contested).To(BeFalse())
		g.Eventually(readyOf(victimLink), timeout, poll).Should(Equal(linkActive))
		g.Eventually(readyOf(squat), timeout, poll).Should(Equal(claimed))
		g.Expect(readyOf(squatLink)(g)).To(Equal(linkDomainNotFound))
	}
	// victimReturns: the victim recreates its Domain, named name, and
	// takes the hostname back.
	victimReturns := func(g Gomega, name string) {
		victim = newDomain(nsV, name, hostname)
		g.Expect(k8sClient.Create(ctx, victim)).To(Succeed())
		victimBack(g, victim)
	}

	t.Run("delete and recreate", func(t *testing.T) {
		g := NewWithT(t)
		g.Expect(k8sClient.Delete(ctx, victim)).To(Succeed())
		g.Eventually(readyOf(victimLink), timeout, poll).Should(Equal(linkDomainNotFound))
		neverServes(g)
		victimReturns(g, "links")
	})

	t.Run("rename away and back", func(t *testing.T) {
		g := NewWithT(t)
		setHostname(g, victim, host(t, "elsewhere.victim.test"))
		neverServes(g)
		setHostname(g, victim, hostname)
		victimBack(g, victim)
	})

	t.Run("prune and recreate under another name", func(t *testing.T) {
		g := NewWithT(t)
		g.Expect(k8sClient.Delete(ctx, victim)).To(Succeed())
		neverServes(g)
		victimReturns(g, "links-v2")
	})

	t.Run("the victim's TXT record survives a recreate", func(t *testing.T) {
		g := NewWithT(t)
		value := victim.Status.Record.Value
		srv.Set("_kurz-challenge."+hostname, dnsTypeTXT, value)
		g.Eventually(claimOf(victim), timeout, poll).Should(HaveField("Proof", kurzv1alpha1.ProofTXT))
		g.Expect(k8sClient.Delete(ctx, victim)).To(Succeed())
		victim = newDomain(nsV, "links", hostname)
		g.Expect(k8sClient.Create(ctx, victim)).To(Succeed())
		g.Eventually(claimOf(victim), timeout, poll).Should(HaveField("Proof", kurzv1alpha1.ProofTXT))
		g.Expect(victim.Status.Record.Value).To(Equal(value), "stable per workspace and hostname")
		g.Expect(squat.Status.Record.Value).NotTo(Equal(value))
		victimBack(g, victim)
	})
}

// TestBuyerTakesOverWithTXT: the hostname changed hands (sold, or a stale
// Domain left behind). The new DNS owner's workspace publishes its TXT
// record and takes the hostname from the older, unproven claim; removing
// the record (twice seen absent) gives it back.
func TestBuyerTakesOverWithTXT(t *testing.T) {
	testenv.Need(t)
	g := NewWithT(t)
	srv := startControllers(t)
	hostname := host(t, "go.sold.test")
	nsOld, nsNew := newNamespace(t, "stale"), newNamespace(t, "buyer")

	stale := newDomain(nsOld, "go", hostname)
	g.Expect(k8sClient.Create(ctx, stale)).To(Succeed())
	g.Eventually(readyOf(stale), timeout, poll).Should(Equal(pending), "no DNS: owns by age, unproven")
	staleLink := newLink(nsOld, "l", hostname, "k")
	createReady(g, staleLink, linkActive)

	buyer := createDomain(g, nsNew, "go", hostname, claimed)
	g.Expect(buyer.Status.Claim.Contested).To(BeTrue())
	buyerLink := newLink(nsNew, "l", hostname, "k")
	createReady(g, buyerLink, linkDomainNotFound)

	srv.Set(buyer.Status.Record.Name, dnsTypeTXT, buyer.Status.Record.Value)
	g.Eventually(readyOf(buyer), timeout, poll).Should(Equal(verified))
	g.Eventually(readyOf(buyerLink), timeout, poll).Should(Equal(linkActive))
	g.Eventually(readyOf(stale), timeout, poll).Should(Equal(claimed))
	g.Eventually(readyOf(staleLink), timeout, poll).Should(Equal(linkDomainNotFound))

	// A failed lookup proves nothing: TXT proof and the hostname stay,
	// check after check.
	srv.Fail(buyer.Status.Record.Name, true)
	failedFrom := buyer.Status.LastCheckTime.Add(time.Second)
	g.Eventually(func(g Gomega) bool {
		claimOf(buyer)(g)
		return buyer.Status.LastCheckTime.Time.After(failedFrom.Add(2 * time.Second))
	}, timeout, poll).Should(BeTrue(), "several checks failed")
	g.Expect(readyOf(buyer)(g)).To(Equal(verified))
	g.Expect(buyer.Status.Conditions[0].Message).To(ContainSubstring("DNS check failed"))
	g.Expect(buyer.Status.Claim.Proof).To(Equal(kurzv1alpha1.ProofTXT))
	g.Expect(buyer.Status.Claim.TXTAbsentChecks).To(BeZero())
	g.Expect(readyOf(buyerLink)(g)).To(Equal(linkActive))
	g.Expect(readyOf(stale)(g)).To(Equal(claimed))

	// The record definitively gone: the proof is lost and the contested
	// claim cannot own; the older claim serves again.
	srv.Fail(buyer.Status.Record.Name, false)
	srv.Set(buyer.Status.Record.Name, dnsTypeTXT)
	g.Eventually(claimOf(buyer), timeout, poll).Should(HaveField("Proof", kurzv1alpha1.ProofNone))
	g.Eventually(readyOf(buyer), timeout, poll).Should(Equal(claimed))
	g.Eventually(readyOf(stale), timeout, poll).Should(Equal(pending))
	g.Eventually(readyOf(staleLink), timeout, poll).Should(Equal(linkActive))
	g.Eventually(readyOf(buyerLink), timeout, poll).Should(Equal(linkDomainNotFound))
}

// TestBacklogGivesTheOlderWorkspaceTheHostname: Domains of one hostname in
// two workspaces, applied while no controller runs (a start, a leader
// handover, a bulk apply). The controller then reaches them in whatever
// order its workers take them, one after the other or at once: the older
// workspace owns the hostname and its Link serves; the younger Domain's
// claim is contested and its Link does not serve. Several hostnames, so
// that every order the workers can take comes up.
func TestBacklogGivesTheOlderWorkspaceTheHostname(t *testing.T) {
	testenv.Need(t)
	g := NewWithT(t)
	// newNamespace names sort in creation order: Domains created in the
	// same second (creationTimestamp's resolution) are ordered by it.
	nsOld, nsNew := newNamespace(t, "first"), newNamespace(t, "second")
	type pair struct {
		older, younger         *kurzv1alpha1.Domain
		olderLink, youngerLink *kurzv1alpha1.Link
	}
	var pairs []pair
	for i := range 4 {
		h := host(t, fmt.Sprintf("go%d.backlog.test", i))
		p := pair{older: newDomain(nsOld, "go"+strconv.Itoa(i), h), younger: newDomain(nsNew, "go"+strconv.Itoa(i), h),
			olderLink: newLink(nsOld, "l"+strconv.Itoa(i), h, "k"), youngerLink: newLink(nsNew, "l"+strconv.Itoa(i), h, "k")}
		for _, o := range []client.Object{p.older, p.younger, p.olderLink, p.youngerLink} {
			g.Expect(k8sClient.Create(ctx, o)).To(Succeed())
		}
		pairs = append(pairs, p)
	}

	startControllers(t)
	for _, p := range pairs {
		g.Eventually(readyOf(p.older), timeout, poll).Should(Equal(pending), "owns the hostname, unproven (no DNS)")
		g.Eventually(readyOf(p.younger), timeout, poll).Should(Equal(claimed))
		g.Eventually(readyOf(p.olderLink), timeout, poll).Should(Equal(linkActive))
		g.Eventually(readyOf(p.youngerLink), timeout, poll).Should(Equal(linkDomainNotFound))
		g.Expect(p.older.Status.Claim.Contested).To(BeFalse())
		g.Expect(p.younger.Status.Claim.Contested).To(BeTrue())
		g.Expect(p.older.Status.Claim.Since.Time).To(Equal(p.older.CreationTimestamp.Time), "claims since its creation")
	}
}

// TestUpgradeHealsAClaimRecordedWrongly: claims an earlier kurz recorded
// while behind (the older Domain reconciled first, while the younger one
// had no claim yet and so counted as holding the hostname: the older
// contested, the younger owning) are put right when this controller
// starts: the older workspace gets its hostname back, the younger claim
// turns contested.
func TestUpgradeHealsAClaimRecordedWrongly(t *testing.T) {
	testenv.Need(t)
	g := NewWithT(t)
	nsOld, nsNew := newNamespace(t, "first"), newNamespace(t, "second")
	h := host(t, "go.upgrade.test")
	older, younger := newDomain(nsOld, "go", h), newDomain(nsNew, "go", h)
	olderLink, youngerLink := newLink(nsOld, "l", h, "k"), newLink(nsNew, "l", h, "k")
	for _, o := range []client.Object{older, younger, olderLink, youngerLink} {
		g.Expect(k8sClient.Create(ctx, o)).To(Succeed())
	}
	// What the earlier kurz wrote, its first pass 3 s after both were
	// created (so createdAt is the creationTimestamp).
	judged := metav1.NewTime(younger.CreationTimestamp.Add(3 * time.Second))
	for _, d := range []*kurzv1alpha1.Domain{older, younger} {
		created := metav1.NewMicroTime(d.CreationTimestamp.Time)
		d.Status.CreatedAt = &created
		d.Status.Claim = &kurzv1alpha1.DomainClaim{Hostname: h, Since: created, Contested: d == older}
		reason := kurzv1alpha1.ReasonVerificationPending
		if d == older {
			reason = kurzv1alpha1.ReasonDomainClaimed
		}
		d.Status.Conditions = []metav1.Condition{{Type: kurzv1alpha1.ConditionReady, Status: metav1.ConditionFalse,
			Reason: reason, Message: "recorded by an earlier kurz", LastTransitionTime: judged, ObservedGeneration: 1}}
		g.Expect(k8sClient.Status().Update(ctx, d)).To(Succeed())
	}

	startControllers(t)
	g.Eventually(readyOf(older), timeout, poll).Should(Equal(pending))
	g.Eventually(readyOf(younger), timeout, poll).Should(Equal(claimed))
	g.Eventually(readyOf(olderLink), timeout, poll).Should(Equal(linkActive))
	g.Eventually(readyOf(youngerLink), timeout, poll).Should(Equal(linkDomainNotFound))
	g.Eventually(claimOf(younger), timeout, poll).Should(HaveField("Contested", BeTrue()))
	g.Expect(claimOf(older)(g)).To(And(HaveField("Contested", BeFalse()), HaveField("DecidedAt", Not(BeNil()))))
}
