package claims_test

import (
	"testing"
	"time"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	kurzv1alpha1 "github.com/kurz-dev/kurz/api/v1alpha1"
	"github.com/kurz-dev/kurz/internal/claims"
)

// c is a claim fact for the Owner table: created and claimed ago before t0.
func c(ns string, ago time.Duration, proof kurzv1alpha1.DomainProof, contested bool) claims.Claim {
	return claims.Claim{Namespace: ns, Name: "d", Created: t0.Add(-ago), Current: true, Since: t0.Add(-ago), Proof: proof, Contested: contested}
}

func TestOwnerRules(t *testing.T) {
	const (
		none   = kurzv1alpha1.ProofNone
		txt    = kurzv1alpha1.ProofTXT
		target = kurzv1alpha1.ProofTarget
	)
	deleting := c("a", 3*time.Hour, txt, false)
	deleting.Deleting = true
	unclaimed := claims.Claim{Namespace: "u", Name: "d", Created: t0.Add(-5 * time.Hour)}
	pending := unclaimed
	pending.Since = pending.Created

	tests := []struct {
		name   string
		claims []claims.Claim
		want   string // owner's namespace, "" for none
	}{
		{"none", nil, ""},
		{"the oldest uncontested claim", []claims.Claim{c("b", time.Hour, none, false), c("a", 2*time.Hour, none, false)}, "a"},
		{"TXT outranks an older claim", []claims.Claim{c("old", 48*time.Hour, none, false), c("new", time.Minute, txt, true)}, "new"},
		{"TXT outranks an older CNAME-proven claim", []claims.Claim{c("old", 48*time.Hour, target, false), c("new", time.Minute, txt, false)}, "new"},
		{"two TXT: the older", []claims.Claim{c("b", time.Hour, txt, true), c("a", 2*time.Hour, txt, false)}, "a"},
		{"contested without TXT never owns, even alone", []claims.Claim{c("squat", time.Hour, target, true)}, ""},
		{"contested without TXT yields to a younger uncontested claim", []claims.Claim{c("squat", time.Hour, target, true), c("victim", time.Minute, none, false)}, "victim"},
		{"a deleting claim passes on to the uncontested one only", []claims.Claim{deleting, c("squat", time.Hour, target, true), c("b", time.Minute, none, false)}, "b"},
		{"a deleting claim does not pass to a contested one", []claims.Claim{deleting, c("squat", time.Hour, none, true)}, ""},
		{"an edited Domain's unrecorded claim ranks after recorded ones", []claims.Claim{unclaimed, c("b", time.Minute, none, false)}, "b"},
		{"a new Domain's unrecorded claim counts from its creation", []claims.Claim{pending, c("b", time.Minute, none, false)}, "u"},
		{"an unrecorded claim alone owns (kurz dev before the controller)", []claims.Claim{unclaimed}, "u"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			i := claims.Owner(tt.claims)
			got := ""
			if i >= 0 {
				got = tt.claims[i].Namespace
			}
			NewWithT(t).Expect(got).To(Equal(tt.want))
		})
	}
}

func TestObserve(t *testing.T) {
	const (
		found  = claims.CheckFound
		absent = claims.CheckAbsent
		failed = claims.CheckFailed
	)
	type step struct{ txt, target claims.Check }
	tests := []struct {
		name  string
		steps []step
		want  kurzv1alpha1.DomainProof
	}{
		{"TXT found", []step{{found, failed}}, kurzv1alpha1.ProofTXT},
		{"target found", []step{{absent, found}}, kurzv1alpha1.ProofTarget},
		{"TXT kept through one absence", []step{{found, failed}, {absent, absent}}, kurzv1alpha1.ProofTXT},
		{"TXT lost on the second absence in a row", []step{{found, failed}, {absent, absent}, {absent, absent}}, kurzv1alpha1.ProofNone},
		{"TXT lost, target left", []step{{found, failed}, {absent, found}, {absent, found}}, kurzv1alpha1.ProofTarget},
		{"absences not in a row", []step{{found, failed}, {absent, absent}, {found, failed}, {absent, absent}}, kurzv1alpha1.ProofTXT},
		{"failed lookups change nothing", []step{{found, failed}, {failed, failed}, {failed, absent}, {failed, failed}}, kurzv1alpha1.ProofTXT},
		{"a failed lookup between absences does not reset nor count", []step{{found, failed}, {absent, absent}, {failed, failed}, {absent, absent}}, kurzv1alpha1.ProofNone},
		{"target kept on a failed lookup", []step{{absent, found}, {failed, failed}}, kurzv1alpha1.ProofTarget},
		{"target lost when absent", []step{{absent, found}, {absent, absent}}, kurzv1alpha1.ProofNone},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cl := &kurzv1alpha1.DomainClaim{}
			for _, s := range tt.steps {
				claims.Observe(cl, s.txt, s.target)
			}
			NewWithT(t).Expect(cl.Proof).To(Equal(tt.want))
		})
	}
}

func TestBeginContested(t *testing.T) {
	g := NewWithT(t)
	now := t0
	holder := claimed("victim", "d", time.Hour, "go.test", time.Hour)
	holder.Spec.Domain = "go.test"

	squat := domain("squat", "d", time.Minute)
	squat.Spec.Domain, squat.Generation = "go.test", 1
	g.Expect(claims.Begin(&squat, []kurzv1alpha1.Domain{holder, squat}, now)).To(BeTrue())
	g.Expect(squat.Status.Claim.Contested).To(BeTrue())
	g.Expect(squat.Status.Claim.Since.Time).To(Equal(squat.CreationTimestamp.Time), "a new Domain claims since its creation")
	g.Expect(claims.Begin(&squat, nil, now)).To(BeFalse(), "recorded once")
	g.Expect(squat.Status.Claim.Contested).To(BeTrue(), "kept for good")

	// The holder recreated: the squatter cannot own, so the claim is not
	// contested.
	again := domain("victim", "d2", 0)
	again.Spec.Domain, again.Generation = "go.test", 1
	g.Expect(claims.Begin(&again, []kurzv1alpha1.Domain{squat}, now)).To(BeTrue())
	g.Expect(again.Status.Claim.Contested).To(BeFalse())

	// Same workspace: never contested. Edited (generation 2): claims now.
	mine := domain("victim", "d3", 48*time.Hour)
	mine.Spec.Domain, mine.Generation = "go.test", 2
	g.Expect(claims.Begin(&mine, []kurzv1alpha1.Domain{holder}, now)).To(BeTrue())
	g.Expect(mine.Status.Claim.Contested).To(BeFalse())
	g.Expect(mine.Status.Claim.Since).To(Equal(metav1.NewMicroTime(now)))
}

func TestChallengeValue(t *testing.T) {
	g := NewWithT(t)
	v := claims.ChallengeValue("uid-1", "go.test")
	g.Expect(v).To(MatchRegexp(`^kurz-[0-9a-f]{32}$`))
	g.Expect(claims.ChallengeValue("uid-1", "go.test")).To(Equal(v), "stable")
	g.Expect(claims.ChallengeValue("uid-2", "go.test")).NotTo(Equal(v), "per workspace")
	g.Expect(claims.ChallengeValue("uid-1", "go2.test")).NotTo(Equal(v), "per hostname")

	d := domain("a", "d", time.Hour)
	d.Spec.Domain = "go.test"
	d.Status.VerificationToken = "kurz-chosen-by-a-tenant"
	g.Expect(claims.SetChallenge(&d, "uid-1")).To(BeTrue())
	g.Expect(d.Status.VerificationToken).To(Equal(v), "derived, never trusted from status")
	g.Expect(d.Status.Record).To(Equal(&kurzv1alpha1.DNSRecord{Name: "_kurz-challenge.go.test", Type: "TXT", Value: v}))
	g.Expect(claims.SetChallenge(&d, "uid-1")).To(BeFalse())
}
