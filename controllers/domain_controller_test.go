package controllers_test

import (
	"net"
	"testing"
	"time"

	mdns "github.com/miekg/dns"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	kurzv1alpha1 "github.com/kurz-dev/kurz/api/v1alpha1"
	"github.com/kurz-dev/kurz/controllers"
	"github.com/kurz-dev/kurz/internal/dns"
	"github.com/kurz-dev/kurz/internal/testenv"
)

const (
	dnsTypeA     = mdns.TypeA
	dnsTypeAAAA  = mdns.TypeAAAA
	dnsTypeCNAME = mdns.TypeCNAME
	dnsTypeTXT   = mdns.TypeTXT
)

func TestDomainVerifiedByTXT(t *testing.T) {
	testenv.Need(t)
	g := NewWithT(t)
	srv := startControllers(t)
	ns, h := namespaceAndHost(t, "txt")

	d := createDomain(g, ns, "go", h, pending)
	g.Expect(d.Status.Phase).To(Equal(kurzv1alpha1.DomainPending))
	token := d.Status.VerificationToken
	g.Expect(token).To(HavePrefix("kurz-"))
	g.Expect(len(token)).To(Equal(len("kurz-") + 32))
	g.Expect(d.Status.Record).To(Equal(&kurzv1alpha1.DNSRecord{Name: "_kurz-challenge." + h, Type: "TXT", Value: token}))
	g.Expect(d.Status.LastCheckTime).NotTo(BeNil())
	g.Expect(d.Status.ObservedGeneration).To(Equal(d.Generation))
	g.Expect(d.Status.CreatedAt).NotTo(BeNil())
	g.Expect(d.Status.UpdatedGeneration).To(Equal(d.Generation))
	// The token is published in DNS but never repeated in the condition.
	g.Expect(d.Status.Conditions[0].Message).NotTo(ContainSubstring(token))

	// A wrong value does not verify it.
	srv.Set("_kurz-challenge."+h, dnsTypeTXT, "kurz-someone-else")
	g.Consistently(readyOf(d), "1s", poll).Should(Equal(pending))

	srv.Set("_kurz-challenge."+h, dnsTypeTXT, "kurz-someone-else", token)
	g.Eventually(readyOf(d), timeout, poll).Should(Equal(verified))
	g.Expect(d.Status.Phase).To(Equal(kurzv1alpha1.DomainActive))
	g.Expect(d.Status.VerificationToken).To(Equal(token), "the token is generated once")

	// The record goes away: the periodic recheck demotes the domain.
	srv.Set("_kurz-challenge."+h, dnsTypeTXT)
	g.Eventually(readyOf(d), timeout, poll).Should(Equal(pending))
	g.Expect(d.Status.Phase).To(Equal(kurzv1alpha1.DomainPending))
	g.Expect(d.Status.VerificationToken).To(Equal(token))

	g.Eventually(eventReasons(d), timeout, poll).Should(ContainElements(
		kurzv1alpha1.ReasonVerificationPending, kurzv1alpha1.ReasonVerified))
}

func TestDomainVerifiedByRedirectTarget(t *testing.T) {
	testenv.Need(t)
	srv := startControllers(t)
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
			g.Expect(k8sClient.Create(ctx, d)).To(Succeed())
			g.Eventually(readyOf(d), timeout, poll).Should(Equal(pending))

			srv.Set(tt.hostname, tt.rrtype, tt.value)
			g.Eventually(readyOf(d), timeout, poll).Should(Equal(verified))
			g.Expect(d.Status.Phase).To(Equal(kurzv1alpha1.DomainActive))

			srv.Set(tt.hostname, tt.rrtype)
			g.Eventually(readyOf(d), timeout, poll).Should(Equal(pending))
		})
	}
}

// TestDomainClaimPassesToNextOldest: without DNS proof an uncontested claim
// (here a second Domain of the owner's own workspace) passes on to the next
// oldest when the owner goes; a contested one (another workspace's, begun
// while the owner held the hostname) never does, until its TXT record
// proves it, which then outranks every unproven claim whatever its age.
func TestDomainClaimPassesToNextOldest(t *testing.T) {
	testenv.Need(t)
	g := NewWithT(t)
	srv := startControllers(t)
	hostname := host(t, "go.claim.test")
	nsA, nsC := newNamespace(t, "claim"), newNamespace(t, "claim")

	owner := createDomain(g, nsA, "go", hostname, pending)
	second := createDomain(g, nsA, "go-2", hostname, claimed)
	g.Expect(second.Status.Claim.Contested).To(BeFalse(), "its own workspace held the hostname")
	g.Expect(second.Status.Conditions[0].Message).To(ContainSubstring("Domain go, which is older,"))
	third := createDomain(g, nsC, "go", hostname, claimed)
	g.Expect(third.Status.Claim.Contested).To(BeTrue())
	g.Expect(third.Status.Conditions[0].Message).NotTo(ContainSubstring(nsA), "another workspace is never named")

	// A link of a claimed hostname does not serve.
	l := newLink(nsC, "l", hostname, "k")
	createReady(g, l, linkDomainNotFound)
	g.Expect(l.Status.Conditions[0].Message).To(ContainSubstring("does not own its hostname"))

	// The owner goes: the uncontested claim passes on, the contested one
	// does not, though it is next by age among the other workspaces.
	g.Expect(k8sClient.Delete(ctx, owner)).To(Succeed())
	g.Eventually(readyOf(second), timeout, poll).Should(Equal(pending))
	g.Eventually(eventReasons(second), timeout, poll).Should(ContainElements(
		kurzv1alpha1.ReasonDomainClaimed, kurzv1alpha1.ReasonVerificationPending))
	g.Consistently(readyOf(third), "1s", poll).Should(Equal(claimed))
	g.Expect(readyOf(l)(g)).To(Equal(linkDomainNotFound))

	// The third's TXT record proves it: it outranks the older, unproven
	// claim.
	srv.Set("_kurz-challenge."+hostname, dnsTypeTXT, third.Status.VerificationToken)
	g.Eventually(readyOf(third), timeout, poll).Should(Equal(verified))
	g.Expect(third.Status.Phase).To(Equal(kurzv1alpha1.DomainActive))
	g.Eventually(readyOf(second), timeout, poll).Should(Equal(claimed))
	g.Expect(second.Status.Conditions[0].Message).To(ContainSubstring("proven by its TXT record"))
	g.Eventually(readyOf(l), timeout, poll).Should(Equal(linkActive))

	// A hostname change releases the claim: back to the uncontested one.
	setHostname(g, third, host(t, "other.claim.test"))
	g.Eventually(readyOf(second), timeout, poll).Should(Equal(pending))
	g.Eventually(readyOf(third), timeout, poll).Should(Equal(pending))
	g.Expect(third.Status.Record.Name).To(Equal("_kurz-challenge." + host(t, "other.claim.test")))
	g.Eventually(readyOf(l), timeout, poll).Should(Equal(linkDomainNotFound))

	// Taking the hostname back is a new, contested claim; the TXT record,
	// still published and the same for this workspace, proves it at once.
	third.Spec.Domain = kurzv1alpha1.Hostname(hostname)
	g.Expect(k8sClient.Update(ctx, third)).To(Succeed())
	g.Eventually(readyOf(third), timeout, poll).Should(Equal(verified))
	g.Expect(third.Status.Claim.Contested).To(BeTrue())
	g.Eventually(readyOf(second), timeout, poll).Should(Equal(claimed))
}

// TestDomainEditCannotTakeHostname: a hostname goes to the oldest claim, not
// the oldest Domain, so a workspace editing an old Domain's spec.domain to
// another workspace's hostname does not take it over.
func TestDomainEditCannotTakeHostname(t *testing.T) {
	testenv.Need(t)
	g := NewWithT(t)
	srv := startControllers(t)
	oldHost, victimHost := host(t, "old.hijack.test"), host(t, "victim.hijack.test")
	nsA, nsB := newNamespace(t, "hijack"), newNamespace(t, "hijack")

	attacker := createDomain(g, nsA, "d", oldHost, pending)
	g.Expect(attacker.Status.Claim).NotTo(BeNil())
	g.Expect(attacker.Status.Claim.Hostname).To(Equal(oldHost))
	attackerLink := newLink(nsA, "l", victimHost, "k")
	g.Expect(k8sClient.Create(ctx, attackerLink)).To(Succeed())

	// The victim's Domain is the newer one, whatever the namespace names.
	g.Eventually(time.Now, timeout, poll).Should(BeTemporally(">", attacker.CreationTimestamp.Add(time.Second)))
	victim := createDomain(g, nsB, "d", victimHost, pending)
	g.Expect(victim.CreationTimestamp.After(attacker.CreationTimestamp.Time)).To(BeTrue())
	srv.Set("_kurz-challenge."+victimHost, dnsTypeTXT, victim.Status.VerificationToken)
	g.Eventually(readyOf(victim), timeout, poll).Should(Equal(verified))
	victimLink := newLink(nsB, "l", victimHost, "k")
	createReady(g, victimLink, linkActive)
	g.Eventually(readyOf(attackerLink), timeout, poll).Should(Equal(linkDomainNotFound))

	// The edit the API refuses, done with kubectl (here: the client).
	setHostname(g, attacker, victimHost)
	g.Eventually(readyOf(attacker), timeout, poll).Should(Equal(claimed))
	g.Expect(attacker.Status.Claim.Hostname).To(Equal(victimHost))
	g.Expect(attacker.Status.Claim.Since.After(victim.Status.Claim.Since.Time)).To(BeTrue())
	g.Consistently(func(g Gomega) []string {
		return []string{readyOf(victim)(g), readyOf(victimLink)(g), readyOf(attackerLink)(g)}
	}, "2s", poll).Should(Equal([]string{verified, linkActive, linkDomainNotFound}))
	g.Expect(victim.Status.Phase).To(Equal(kurzv1alpha1.DomainActive))
}

// silentDNS returns the address of a UDP socket nobody reads: a DNS server
// that never answers.
func silentDNS(t *testing.T) string {
	t.Helper()
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("listen: %v", err)
	}
	t.Cleanup(func() { _ = pc.Close() })
	return pc.LocalAddr().String()
}

// TestDomainDNSFailureFollowsSchedule: a failed check is a completed check.
// The reconcile returns no error (the work queue would retry at once, each
// retry holding a worker for the DNS timeout) but asks to run again on the
// schedule, records the check, says so in Ready, and keeps the phase, so a
// DNS outage cannot demote an Active domain.
func TestDomainDNSFailureFollowsSchedule(t *testing.T) {
	testenv.Need(t)
	g := NewWithT(t)
	srv := newDNS(t)
	o := testOptions(srv)
	o.DNSRecheckInterval = time.Hour
	mgr := newManager(t, cfg, o, nil)
	start(t, mgr)
	ns := newNamespace(t, "dnsfail")

	active := createDomain(g, ns, "active", host(t, "active.dnsfail.test"), pending)
	srv.Set("_kurz-challenge."+string(active.Spec.Domain), dnsTypeTXT, active.Status.VerificationToken)
	g.Eventually(readyOf(active), timeout, poll).Should(Equal(verified))
	pendingDomain := createDomain(g, ns, "pending", host(t, "pending.dnsfail.test"), pending)
	for _, d := range []*kurzv1alpha1.Domain{active, pendingDomain} {
		g.Eventually(func(g Gomega) *metav1.Time {
			var cached kurzv1alpha1.Domain
			g.Expect(mgr.GetClient().Get(ctx, client.ObjectKeyFromObject(d), &cached)).To(Succeed())
			return cached.Status.LastCheckTime
		}, timeout, poll).ShouldNot(BeNil())
	}

	silent := dns.DefaultOptions()
	silent.Server, silent.Targets, silent.Timeout = silentDNS(t), []string{targetHost}, 200*time.Millisecond
	verifier, err := dns.New(silent)
	g.Expect(err).NotTo(HaveOccurred())
	schedule := controllers.Schedule{Recheck: 3 * time.Hour, Backoff: 7 * time.Minute, BackoffMax: 7 * time.Minute}
	later := time.Now().Add(24 * time.Hour) // every check is due
	r := &controllers.DomainReconciler{
		Client:   mgr.GetClient(),
		Verifier: verifier,
		Schedule: schedule,
		Now:      func() time.Time { return later },
	}

	tests := []struct {
		domain *kurzv1alpha1.Domain
		phase  kurzv1alpha1.DomainPhase
		after  time.Duration
	}{
		{active, kurzv1alpha1.DomainActive, schedule.Recheck},
		{pendingDomain, kurzv1alpha1.DomainPending, schedule.BackoffMax},
	}
	for _, tt := range tests {
		t.Run(string(tt.phase), func(t *testing.T) {
			g := NewWithT(t)
			res, err := r.Reconcile(ctx, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(tt.domain)})
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(res.RequeueAfter).To(Equal(tt.after))

			d := &kurzv1alpha1.Domain{}
			g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(tt.domain), d)).To(Succeed())
			g.Expect(d.Status.Phase).To(Equal(tt.phase))
			g.Expect(d.Status.LastCheckTime.Time).To(Equal(later.Truncate(time.Second)))
			if tt.phase == kurzv1alpha1.DomainActive {
				// The live controller rechecks hourly: the message stays.
				g.Expect(readyOf(d)(g)).To(Equal(verified))
				msg := d.Status.Conditions[0].Message
				g.Expect(msg).To(ContainSubstring("DNS check failed"))
				g.Expect(msg).NotTo(ContainSubstring(d.Status.VerificationToken))
				g.Expect(msg).NotTo(ContainSubstring("127.0.0.1"))
			}
		})
	}
}
