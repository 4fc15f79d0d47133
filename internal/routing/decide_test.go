package routing

import (
	"testing"
	"time"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	kurzv1alpha1 "github.com/kurz-dev/kurz/api/v1alpha1"
)

func TestDecide(t *testing.T) {
	now := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	grace := time.Hour
	domain := func(host string, phase kurzv1alpha1.DomainPhase, ready metav1.ConditionStatus, since time.Time, claimHost string) *kurzv1alpha1.Domain {
		d := &kurzv1alpha1.Domain{Spec: kurzv1alpha1.DomainSpec{Domain: kurzv1alpha1.Hostname(host)}}
		d.Status.Phase = phase
		d.Status.Claim = &kurzv1alpha1.DomainClaim{Hostname: claimHost}
		d.Status.Conditions = []metav1.Condition{{Type: kurzv1alpha1.ConditionReady, Status: ready, LastTransitionTime: metav1.NewTime(since)}}
		return d
	}
	active := domain("go.example.com", kurzv1alpha1.DomainActive, metav1.ConditionTrue, now.Add(-time.Minute), "go.example.com")
	lapsed := func(ago time.Duration) *kurzv1alpha1.Domain {
		return domain("go.example.com", kurzv1alpha1.DomainPending, metav1.ConditionFalse, now.Add(-ago), "go.example.com")
	}

	for _, tc := range []struct {
		name     string
		d        *kurzv1alpha1.Domain
		holds    bool
		existing string
		want     Decision
	}{
		{"Domain gone", nil, false, "go.example.com", Decision{Action: Remove}},
		{"hostname held by another Domain", active, false, "go.example.com", Decision{Action: Remove}},
		{"Active owner", active, true, "", Decision{Action: Apply}},
		{"Active owner, Ingress for an old hostname", active, true, "old.example.com", Decision{Action: Apply}},
		{"hostname edited, new claim not recorded yet",
			domain("new.example.com", kurzv1alpha1.DomainActive, metav1.ConditionTrue, now, "go.example.com"), true, "go.example.com", Decision{Action: Remove}},
		{"never Active: nothing to keep", lapsed(time.Minute), true, "", Decision{Action: Remove}},
		{"no longer Active, within grace", lapsed(10 * time.Minute), true, "go.example.com", Decision{Action: Keep, Wait: 50 * time.Minute}},
		{"no longer Active, grace over", lapsed(2 * time.Hour), true, "go.example.com", Decision{Action: Remove}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			NewWithT(t).Expect(Decide(tc.d, tc.holds, tc.existing, grace, now)).To(Equal(tc.want))
		})
	}
}
