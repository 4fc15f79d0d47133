package controllers

import (
	"context"
	"errors"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	kurzv1alpha1 "github.com/kurz-dev/kurz/api/v1alpha1"
	"github.com/kurz-dev/kurz/internal/dns"
)

// The status logic as tables of inputs → conditions, with a fake DNS
// verifier: no control plane (the envtest suite of this package proves the
// same states on real objects, and what kstatus and Argo CD make of them).

// conds is the conditions of one state, each as "Status/Reason" ("" when
// absent).
type conds struct{ ready, reconciling, stalled string }

func condsOf(c []metav1.Condition) conds {
	get := func(typ string) string {
		if x := meta.FindStatusCondition(c, typ); x != nil {
			return string(x.Status) + "/" + x.Reason
		}
		return ""
	}
	return conds{get(kurzv1alpha1.ConditionReady), get(kurzv1alpha1.ConditionReconciling), get(kurzv1alpha1.ConditionStalled)}
}

var t0 = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

func tableDomain(ns, name string, age time.Duration, claim *kurzv1alpha1.DomainClaim) kurzv1alpha1.Domain {
	d := kurzv1alpha1.Domain{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Generation: 1,
			CreationTimestamp: metav1.NewTime(t0.Add(-age))},
		Spec: kurzv1alpha1.DomainSpec{Domain: "go.example"},
	}
	if claim != nil {
		claim.Hostname = "go.example"
		claim.Since = metav1.NewMicroTime(t0.Add(-age))
		d.Status.Claim = claim
	}
	return d
}

func tableLink(name string, age time.Duration) kurzv1alpha1.Link {
	return kurzv1alpha1.Link{
		ObjectMeta: metav1.ObjectMeta{Namespace: "a", Name: name, Generation: 3,
			CreationTimestamp: metav1.NewTime(t0.Add(-age))},
		Spec: kurzv1alpha1.LinkSpec{Domain: "go.example", Key: "k", URL: "https://example.com/"},
	}
}

func TestLinkConditionsTable(t *testing.T) {
	own := tableDomain("a", "go", time.Hour, &kurzv1alpha1.DomainClaim{})
	othersProven := tableDomain("b", "go", time.Minute, &kurzv1alpha1.DomainClaim{Proof: kurzv1alpha1.ProofTXT})
	ownContested := tableDomain("a", "go", time.Minute, &kurzv1alpha1.DomainClaim{Contested: true})
	othersOld := tableDomain("b", "go", 2*time.Hour, &kurzv1alpha1.DomainClaim{})
	expired := tableLink("l", time.Hour)
	expired.Spec.ExpiresAt = &metav1.Time{Time: t0.Add(-time.Second)}

	for _, tc := range []struct {
		name    string
		link    kurzv1alpha1.Link
		domains []kurzv1alpha1.Domain
		peers   []kurzv1alpha1.Link
		want    conds
	}{
		{"active", tableLink("l", time.Hour), []kurzv1alpha1.Domain{own}, nil,
			conds{"True/Active", "", ""}},
		{"expired is settled", expired, []kurzv1alpha1.Domain{own}, nil,
			conds{"True/Expired", "", ""}},
		{"no Domain waits for one", tableLink("l", time.Hour), nil, nil,
			conds{"False/DomainNotFound", "True/DomainNotFound", ""}},
		{"another workspace's Domain only: waits for ours", tableLink("l", time.Hour), []kurzv1alpha1.Domain{othersOld}, nil,
			conds{"False/DomainNotFound", "True/DomainNotFound", ""}},
		{"our Domain outranked by TXT proof stalls", tableLink("l", time.Hour), []kurzv1alpha1.Domain{own, othersProven}, nil,
			conds{"False/DomainNotFound", "", "True/DomainClaimed"}},
		{"our Domain younger than another's stalls", tableLink("l", time.Hour), []kurzv1alpha1.Domain{ownContested, othersOld}, nil,
			conds{"False/DomainNotFound", "", "True/DomainClaimed"}},
		{"our contested Domain nobody holds waits for TXT", tableLink("l", time.Hour), []kurzv1alpha1.Domain{ownContested}, nil,
			conds{"False/DomainNotFound", "True/TXTRequired", ""}},
		{"older Link holds the key: stalled", tableLink("l", time.Hour), []kurzv1alpha1.Domain{own},
			[]kurzv1alpha1.Link{tableLink("older", 2*time.Hour)},
			conds{"False/KeyConflict", "", "True/KeyConflict"}},
		{"younger Link with the key changes nothing", tableLink("l", time.Hour), []kurzv1alpha1.Domain{own},
			[]kurzv1alpha1.Link{tableLink("younger", time.Minute)},
			conds{"True/Active", "", ""}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			l := tc.link.DeepCopy()
			setLinkStatus(l, linkInputs{domains: tc.domains, peers: tc.peers}, t0)
			g.Expect(condsOf(l.Status.Conditions)).To(Equal(tc.want))
			g.Expect(l.Status.ObservedGeneration).To(Equal(l.Generation))
			for _, c := range l.Status.Conditions {
				g.Expect(c.ObservedGeneration).To(Equal(l.Generation), c.Type)
				g.Expect(c.Message).NotTo(BeEmpty(), c.Type)
				g.Expect(c.Message).NotTo(ContainSubstring(`"b"`), "never names another workspace")
			}
		})
	}
}

// TestStateChangeClearsAbnormalConditions: a state that settles drops
// Reconciling and Stalled, which kstatus would otherwise still read.
func TestStateChangeClearsAbnormalConditions(t *testing.T) {
	g := NewWithT(t)
	l := tableLink("l", time.Hour)
	setLinkStatus(&l, linkInputs{}, t0)
	g.Expect(condsOf(l.Status.Conditions)).To(Equal(conds{"False/DomainNotFound", "True/DomainNotFound", ""}))
	setLinkStatus(&l, linkInputs{peers: []kurzv1alpha1.Link{tableLink("older", 2*time.Hour)},
		domains: []kurzv1alpha1.Domain{tableDomain("a", "go", time.Hour, nil)}}, t0)
	g.Expect(condsOf(l.Status.Conditions)).To(Equal(conds{"False/KeyConflict", "", "True/KeyConflict"}))
	setLinkStatus(&l, linkInputs{domains: []kurzv1alpha1.Domain{tableDomain("a", "go", time.Hour, nil)}}, t0)
	g.Expect(l.Status.Conditions).To(HaveLen(1))
	g.Expect(condsOf(l.Status.Conditions)).To(Equal(conds{"True/Active", "", ""}))
}

// fakeVerifier answers every check with res and err, counting the checks.
type fakeVerifier struct {
	res    dns.Result
	err    error
	checks int
}

func (f *fakeVerifier) Verify(context.Context, string, string) (dns.Result, error) {
	f.checks++
	return f.res, f.err
}

func TestDomainConditionsTable(t *testing.T) {
	txtAbsent := dns.Result{TXTAbsent: true}
	for _, tc := range []struct {
		name      string
		dns       fakeVerifier
		self      kurzv1alpha1.Domain
		others    []kurzv1alpha1.Domain
		want      conds
		wantPhase kurzv1alpha1.DomainPhase
		wantMsg   string
	}{
		{"target proves an uncontested owner", fakeVerifier{res: dns.Result{Method: dns.MethodCNAME}},
			tableDomain("a", "go", time.Hour, nil), nil,
			conds{"True/Verified", "", ""}, kurzv1alpha1.DomainActive, "points at a redirect target"},
		{"TXT proves", fakeVerifier{res: dns.Result{Method: dns.MethodTXT}},
			tableDomain("a", "go", time.Hour, nil), nil,
			conds{"True/Verified", "", ""}, kurzv1alpha1.DomainActive, "holds the verification token"},
		{"owner without proof waits for DNS", fakeVerifier{res: txtAbsent},
			tableDomain("a", "go", time.Hour, nil), nil,
			conds{"False/VerificationPending", "True/VerificationPending", ""}, kurzv1alpha1.DomainPending, "Publish the TXT record"},
		{"failed lookup waits too, and says so", fakeVerifier{err: errors.New("SERVFAIL")},
			tableDomain("a", "go", time.Hour, nil), nil,
			conds{"False/VerificationPending", "True/VerificationPending", ""}, kurzv1alpha1.DomainPending, "The last DNS check failed"},
		{"failed lookup keeps a proven owner settled", fakeVerifier{err: errors.New("SERVFAIL")},
			tableDomain("a", "go", time.Hour, &kurzv1alpha1.DomainClaim{Proof: kurzv1alpha1.ProofTXT}), nil,
			conds{"True/Verified", "", ""}, kurzv1alpha1.DomainActive, "the domain stays Active"},
		{"older Domain of another workspace holds it: stalled", fakeVerifier{res: dns.Result{Method: dns.MethodCNAME}},
			tableDomain("a", "go", time.Minute, nil), []kurzv1alpha1.Domain{tableDomain("b", "go", time.Hour, &kurzv1alpha1.DomainClaim{})},
			conds{"False/DomainClaimed", "", "True/DomainClaimed"}, kurzv1alpha1.DomainPending, "publish the TXT record"},
		{"TXT-proven Domain holds it: stalled whatever our age", fakeVerifier{res: txtAbsent},
			tableDomain("a", "go", time.Hour, nil), []kurzv1alpha1.Domain{tableDomain("b", "go", time.Minute, &kurzv1alpha1.DomainClaim{Proof: kurzv1alpha1.ProofTXT})},
			conds{"False/DomainClaimed", "", "True/DomainClaimed"}, kurzv1alpha1.DomainPending, "proven by its TXT record"},
		{"contested claim nobody holds waits for TXT", fakeVerifier{res: dns.Result{Method: dns.MethodCNAME}},
			tableDomain("a", "go", time.Minute, &kurzv1alpha1.DomainClaim{Contested: true}), nil,
			conds{"False/TXTRequired", "True/TXTRequired", ""}, kurzv1alpha1.DomainPending, "only TXT proves it"},
		{"contested claim proven by TXT takes the hostname", fakeVerifier{res: dns.Result{Method: dns.MethodTXT}},
			tableDomain("a", "go", time.Minute, &kurzv1alpha1.DomainClaim{Contested: true}), []kurzv1alpha1.Domain{tableDomain("b", "go", time.Hour, &kurzv1alpha1.DomainClaim{})},
			conds{"True/Verified", "", ""}, kurzv1alpha1.DomainActive, "TXT record"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			r := &DomainReconciler{Verifier: &tc.dns, Schedule: Schedule{Recheck: time.Hour, Backoff: time.Second, BackoffMax: time.Minute}}
			d := tc.self.DeepCopy()
			claimants := append([]kurzv1alpha1.Domain{*d}, tc.others...)
			r.setStatus(context.Background(), d, claimants, types.UID("uid-a"), t0)
			g.Expect(tc.dns.checks).To(Equal(1))
			g.Expect(condsOf(d.Status.Conditions)).To(Equal(tc.want))
			g.Expect(d.Status.Phase).To(Equal(tc.wantPhase))
			ready := meta.FindStatusCondition(d.Status.Conditions, kurzv1alpha1.ConditionReady)
			g.Expect(ready.Message).To(ContainSubstring(tc.wantMsg))
			g.Expect(ready.Message).NotTo(ContainSubstring("SERVFAIL"), "resolver errors go to the log")
			for _, c := range d.Status.Conditions {
				g.Expect(c.Message).To(Equal(ready.Message), "%s says what Ready says", c.Type)
			}
		})
	}
}

// TestDomainPassWithoutCheckKeepsConditions: a pass that is not due for a
// DNS check (a watch event) rewrites nothing, so it is no status write.
func TestDomainPassWithoutCheckKeepsConditions(t *testing.T) {
	g := NewWithT(t)
	v := &fakeVerifier{res: dns.Result{TXTAbsent: true}}
	r := &DomainReconciler{Verifier: v, Schedule: Schedule{Recheck: time.Hour, Backoff: time.Minute, BackoffMax: time.Hour}}
	d := tableDomain("a", "go", time.Hour, nil)
	r.setStatus(context.Background(), &d, nil, "uid-a", t0)
	before := d.Status.DeepCopy()
	r.setStatus(context.Background(), &d, nil, "uid-a", t0.Add(time.Second))
	g.Expect(v.checks).To(Equal(1), "the second pass is not due")
	g.Expect(d.Status).To(Equal(*before))
}
