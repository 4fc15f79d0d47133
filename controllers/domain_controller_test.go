package controllers_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	mdns "github.com/miekg/dns"
	. "github.com/onsi/gomega"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	kurzv1alpha1 "github.com/kurz-dev/kurz/api/v1alpha1"
	"github.com/kurz-dev/kurz/controllers"
	"github.com/kurz-dev/kurz/internal/dns"
)

const (
	dnsTypeA     = mdns.TypeA
	dnsTypeAAAA  = mdns.TypeAAAA
	dnsTypeCNAME = mdns.TypeCNAME
	dnsTypeTXT   = mdns.TypeTXT
)

const (
	pending  = "False/" + kurzv1alpha1.ReasonVerificationPending
	verified = "True/" + kurzv1alpha1.ReasonVerified
	claimed  = "False/" + kurzv1alpha1.ReasonDomainClaimed
)

// phaseOf fetches d and returns its phase.
func phaseOf(d *kurzv1alpha1.Domain) func(Gomega) kurzv1alpha1.DomainPhase {
	return func(g Gomega) kurzv1alpha1.DomainPhase {
		g.Expect(k8sClient.Get(context.Background(), client.ObjectKeyFromObject(d), d)).To(Succeed())
		return d.Status.Phase
	}
}

func TestDomainVerifiedByTXT(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	srv := newDNS(t)
	startControllers(t, srv)
	ns := newNamespace(t, "txt")

	d := newDomain(ns, "go", host(t, "go.txt.test"))
	g.Expect(k8sClient.Create(ctx, d)).To(Succeed())
	g.Eventually(readyOf(d), timeout, poll).Should(Equal(pending))
	g.Expect(d.Status.Phase).To(Equal(kurzv1alpha1.DomainPending))
	token := d.Status.VerificationToken
	g.Expect(token).To(HavePrefix("kurz-"))
	g.Expect(len(token)).To(Equal(len("kurz-") + 32))
	g.Expect(d.Status.Record).To(Equal(&kurzv1alpha1.DNSRecord{Name: "_kurz-challenge." + host(t, "go.txt.test"), Type: "TXT", Value: token}))
	g.Expect(d.Status.LastCheckTime).NotTo(BeNil())
	g.Expect(d.Status.ObservedGeneration).To(Equal(d.Generation))
	g.Expect(d.Status.CreatedAt).NotTo(BeNil())
	g.Expect(d.Status.UpdatedGeneration).To(Equal(d.Generation))
	// The token is published in DNS but never repeated in the condition.
	g.Expect(d.Status.Conditions[0].Message).NotTo(ContainSubstring(token))

	// A wrong value does not verify it.
	srv.Set("_kurz-challenge."+host(t, "go.txt.test"), dnsTypeTXT, "kurz-someone-else")
	g.Consistently(readyOf(d), "1s", poll).Should(Equal(pending))

	srv.Set("_kurz-challenge."+host(t, "go.txt.test"), dnsTypeTXT, "kurz-someone-else", token)
	g.Eventually(readyOf(d), timeout, poll).Should(Equal(verified))
	g.Expect(d.Status.Phase).To(Equal(kurzv1alpha1.DomainActive))
	g.Expect(d.Status.VerificationToken).To(Equal(token), "the token is generated once")

	// The record goes away: the periodic recheck demotes the domain.
	srv.Set("_kurz-challenge."+host(t, "go.txt.test"), dnsTypeTXT)
	g.Eventually(readyOf(d), timeout, poll).Should(Equal(pending))
	g.Expect(d.Status.Phase).To(Equal(kurzv1alpha1.DomainPending))
	g.Expect(d.Status.VerificationToken).To(Equal(token))

	g.Eventually(eventReasons(d), timeout, poll).Should(ContainElements(
		kurzv1alpha1.ReasonVerificationPending, kurzv1alpha1.ReasonVerified))
}

func TestDomainVerifiedByRedirectTarget(t *testing.T) {
	srv := newDNS(t)
	startControllers(t, srv)
	ns := newNamespace(t, "target")

	tests := []struct {
		name     string
		hostname string
		rrtype   uint16
		value    string
	}{
		{"CNAME to the target hostname", host(t, "cname.target.test"), dnsTypeCNAME, targetHost},
		{"A of the target IP", host(t, "a.target.test"), dnsTypeA, targetIP},
		{"AAAA of the target hostname's address", host(t, "aaaa.target.test"), dnsTypeAAAA, targetIPv6},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			d := newDomain(ns, "d"+string(rune('0'+i)), tt.hostname)
			g.Expect(k8sClient.Create(context.Background(), d)).To(Succeed())
			g.Eventually(readyOf(d), timeout, poll).Should(Equal(pending))

			srv.Set(tt.hostname, tt.rrtype, tt.value)
			g.Eventually(readyOf(d), timeout, poll).Should(Equal(verified))
			g.Expect(d.Status.Phase).To(Equal(kurzv1alpha1.DomainActive))

			srv.Set(tt.hostname, tt.rrtype)
			g.Eventually(readyOf(d), timeout, poll).Should(Equal(pending))
		})
	}
}

func TestDomainClaimPassesToNextOldest(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	srv := newDNS(t)
	startControllers(t, srv)
	hostname := host(t, "go.claim.test")
	nsA, nsB, nsC := newNamespace(t, "claim"), newNamespace(t, "claim"), newNamespace(t, "claim")

	owner := newDomain(nsA, "go", hostname)
	g.Expect(k8sClient.Create(ctx, owner)).To(Succeed())
	g.Eventually(readyOf(owner), timeout, poll).Should(Equal(pending))
	second := newDomain(nsB, "go", hostname)
	g.Expect(k8sClient.Create(ctx, second)).To(Succeed())
	g.Eventually(readyOf(second), timeout, poll).Should(Equal(claimed))
	g.Expect(second.Status.Conditions[0].Message).NotTo(ContainSubstring(nsA), "another workspace is never named")
	third := newDomain(nsC, "go", hostname)
	g.Expect(k8sClient.Create(ctx, third)).To(Succeed())
	g.Eventually(readyOf(third), timeout, poll).Should(Equal(claimed))

	// A link of a claimed hostname does not serve.
	l := newLink(nsB, "l", hostname, "k")
	g.Expect(k8sClient.Create(ctx, l)).To(Succeed())
	g.Eventually(readyOf(l), timeout, poll).Should(Equal(linkDomainNotFound))
	g.Expect(l.Status.Conditions[0].Message).To(ContainSubstring("another workspace"))

	// DNS proves every claimant, but only the owner becomes Active.
	srv.Set("_kurz-challenge."+hostname, dnsTypeTXT,
		owner.Status.VerificationToken, second.Status.VerificationToken, third.Status.VerificationToken)
	g.Eventually(readyOf(owner), timeout, poll).Should(Equal(verified))
	g.Consistently(phaseOf(second), "1s", poll).Should(Equal(kurzv1alpha1.DomainPending))
	g.Expect(readyOf(third)(g)).To(Equal(claimed))

	// The owner goes: the claim passes to the next oldest, not the newest.
	g.Expect(k8sClient.Delete(ctx, owner)).To(Succeed())
	g.Eventually(readyOf(second), timeout, poll).Should(Equal(verified))
	g.Expect(second.Status.Phase).To(Equal(kurzv1alpha1.DomainActive))
	g.Eventually(readyOf(l), timeout, poll).Should(Equal(linkActive))
	g.Consistently(readyOf(third), "1s", poll).Should(Equal(claimed))
	g.Eventually(eventReasons(second), timeout, poll).Should(ContainElements(
		kurzv1alpha1.ReasonDomainClaimed, kurzv1alpha1.ReasonVerified))

	// A hostname change releases the claim too.
	g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(second), second)).To(Succeed())
	second.Spec.Domain = kurzv1alpha1.Hostname(host(t, "other.claim.test"))
	g.Expect(k8sClient.Update(ctx, second)).To(Succeed())
	g.Eventually(readyOf(third), timeout, poll).Should(Equal(verified))
	g.Eventually(readyOf(second), timeout, poll).Should(Equal(pending))
	g.Expect(second.Status.Record.Name).To(Equal("_kurz-challenge." + host(t, "other.claim.test")))
	g.Eventually(readyOf(l), timeout, poll).Should(Equal(linkDomainNotFound))

	// And taking an older Domain's hostname makes a newer one claimed: the
	// owner stops being Active.
	second.Spec.Domain = kurzv1alpha1.Hostname(hostname)
	g.Expect(k8sClient.Update(ctx, second)).To(Succeed())
	g.Eventually(readyOf(third), timeout, poll).Should(Equal(claimed))
	g.Expect(third.Status.Phase).To(Equal(kurzv1alpha1.DomainPending))
	g.Eventually(readyOf(second), timeout, poll).Should(Equal(verified))
}

// failingVerifier stands for a DNS server that does not answer.
type failingVerifier struct{}

func (failingVerifier) Verify(context.Context, string, string) (dns.Result, error) {
	return dns.Result{}, errors.New("i/o timeout")
}

// TestDomainKeepsPhaseWhenDNSFails: a failed check is retried and changes
// nothing, so a DNS outage cannot demote an Active domain.
func TestDomainKeepsPhaseWhenDNSFails(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	srv := newDNS(t)
	o := testOptions(srv)
	o.DNSRecheckInterval = time.Hour
	mgr := newManager(t, cfg, o, nil)
	start(t, mgr)
	ns := newNamespace(t, "dnsfail")

	d := newDomain(ns, "go", host(t, "go.dnsfail.test"))
	g.Expect(k8sClient.Create(ctx, d)).To(Succeed())
	g.Eventually(readyOf(d), timeout, poll).Should(Equal(pending))
	srv.Set("_kurz-challenge."+string(d.Spec.Domain), dnsTypeTXT, d.Status.VerificationToken)
	g.Eventually(readyOf(d), timeout, poll).Should(Equal(verified))
	g.Eventually(func(g Gomega) kurzv1alpha1.DomainPhase {
		var cached kurzv1alpha1.Domain
		g.Expect(mgr.GetClient().Get(ctx, client.ObjectKeyFromObject(d), &cached)).To(Succeed())
		return cached.Status.Phase
	}, timeout, poll).Should(Equal(kurzv1alpha1.DomainActive))

	var writes atomic.Int64
	r := &controllers.DomainReconciler{
		Client:   countingClient{Client: mgr.GetClient(), writes: &writes},
		Verifier: failingVerifier{},
		// Every check is due at once.
		Schedule: controllers.Schedule{Recheck: time.Nanosecond, Backoff: time.Nanosecond, BackoffMax: time.Nanosecond},
		Now:      time.Now,
	}
	_, err := r.Reconcile(ctx, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(d)})
	g.Expect(err).To(MatchError(ContainSubstring("i/o timeout")))
	g.Expect(writes.Load()).To(BeZero())
	g.Expect(readyOf(d)(g)).To(Equal(verified))
}
