package gauges

import (
	"testing"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	kurzv1alpha1 "github.com/kurz-dev/kurz/api/v1alpha1"
)

func ready(status metav1.ConditionStatus, reason string) []metav1.Condition {
	return []metav1.Condition{{Type: kurzv1alpha1.ConditionReady, Status: status, Reason: reason}}
}

// TestStates: the state label comes from the Ready condition's reason.
func TestStates(t *testing.T) {
	for _, tc := range []struct {
		name         string
		conds        []metav1.Condition
		link, domain string
	}{
		{"never reconciled", nil, StateNew, StateNew},
		{"only another condition", []metav1.Condition{{Type: "Reconciling", Status: metav1.ConditionTrue, Reason: "Progressing"}}, StateNew, StateNew},
		{"active", ready(metav1.ConditionTrue, kurzv1alpha1.ReasonActive), LinkActive, StateOther},
		{"expired", ready(metav1.ConditionFalse, kurzv1alpha1.ReasonExpired), LinkExpired, StateOther},
		{"key conflict", ready(metav1.ConditionFalse, kurzv1alpha1.ReasonKeyConflict), LinkConflict, StateOther},
		{"no domain", ready(metav1.ConditionFalse, kurzv1alpha1.ReasonDomainNotFound), LinkDomainNotFound, StateOther},
		{"verified", ready(metav1.ConditionTrue, kurzv1alpha1.ReasonVerified), StateOther, DomainVerified},
		{"verification pending", ready(metav1.ConditionFalse, kurzv1alpha1.ReasonVerificationPending), StateOther, DomainPending},
		{"claimed elsewhere", ready(metav1.ConditionFalse, kurzv1alpha1.ReasonDomainClaimed), StateOther, DomainClaimed},
		{"contested", ready(metav1.ConditionFalse, kurzv1alpha1.ReasonTXTRequired), StateOther, DomainTXTRequired},
		{"a reason of a newer build", ready(metav1.ConditionFalse, "Quarantined"), StateOther, StateOther},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			g.Expect(LinkState(tc.conds)).To(Equal(tc.link))
			g.Expect(DomainState(tc.conds)).To(Equal(tc.domain))
			g.Expect(LinkStates).To(ContainElement(tc.link), "every state a Link can be in is exported")
			g.Expect(DomainStates).To(ContainElement(tc.domain))
		})
	}
}
