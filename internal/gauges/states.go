package gauges

import (
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	kurzv1alpha1 "github.com/kurz-dev/kurz/api/v1alpha1"
)

// States of a Link (the state label of kurz_links), from its Ready
// condition's reason.
const (
	LinkActive         = "active"
	LinkExpired        = "expired"
	LinkConflict       = "conflict"
	LinkDomainNotFound = "domain_not_found"
)

// States of a Domain (the state label of kurz_domains).
const (
	DomainVerified    = "verified"
	DomainPending     = "pending"
	DomainClaimed     = "claimed"
	DomainTXTRequired = "txt_required"
)

// Of both kinds.
const (
	// StateNew: no controller has written a Ready condition yet.
	StateNew = "new"
	// StateOther: a reason this build does not know (a newer controller).
	StateOther = "other"
)

// LinkStates and DomainStates are every state, in the order exported: each
// is exported, 0 included, so a series does not vanish when its count
// drops to zero.
var (
	LinkStates   = []string{LinkActive, LinkExpired, LinkConflict, LinkDomainNotFound, StateNew, StateOther}
	DomainStates = []string{DomainVerified, DomainPending, DomainClaimed, DomainTXTRequired, StateNew, StateOther}
)

var (
	linkReasons = map[string]string{
		kurzv1alpha1.ReasonActive:         LinkActive,
		kurzv1alpha1.ReasonExpired:        LinkExpired,
		kurzv1alpha1.ReasonKeyConflict:    LinkConflict,
		kurzv1alpha1.ReasonDomainNotFound: LinkDomainNotFound,
	}
	domainReasons = map[string]string{
		kurzv1alpha1.ReasonVerified:            DomainVerified,
		kurzv1alpha1.ReasonVerificationPending: DomainPending,
		kurzv1alpha1.ReasonDomainClaimed:       DomainClaimed,
		kurzv1alpha1.ReasonTXTRequired:         DomainTXTRequired,
	}
)

// LinkState is the state of a Link with these status conditions.
func LinkState(conds []metav1.Condition) string { return stateOf(conds, linkReasons) }

// DomainState is the state of a Domain with these status conditions. The
// Ready reason says more than status.phase (which is only Pending or
// Active): a Domain that lost its hostname to another is claimed, not
// pending.
func DomainState(conds []metav1.Condition) string { return stateOf(conds, domainReasons) }

func stateOf(conds []metav1.Condition, reasons map[string]string) string {
	c := meta.FindStatusCondition(conds, kurzv1alpha1.ConditionReady)
	if c == nil {
		return StateNew
	}
	if s, ok := reasons[c.Reason]; ok {
		return s
	}
	return StateOther
}
