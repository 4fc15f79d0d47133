package routing

import (
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	kurzv1alpha1 "github.com/kurz-dev/kurz/api/v1alpha1"
)

// Action is what to do with a Domain's route (its Ingress, or its HTTPRoute
// and Gateway listener).
type Action int

const (
	// Remove: no Ingress should exist (deleted when one does).
	Remove Action = iota
	// Apply: create or update the Ingress to DesiredIngress.
	Apply
	// Keep: leave the Ingress as it is for now (a grace period runs).
	Keep
)

// Decision is an Action and, for Keep, how long until the grace period ends.
type Decision struct {
	Action Action
	Wait   time.Duration
}

// Decide says what to do with the Ingress of d; d is nil when the Domain is
// gone or being deleted, holds whether d owns its hostname
// (claims.DomainOwner), existingHost the hostname its Ingress or HTTPRoute
// routes now ("" when it has none).
//
//   - A Domain that holds its hostname and is Active, its claim being for
//     its current spec.domain, gets its Ingress.
//   - A Domain that still holds the hostname of its existing Ingress but
//     stopped being Active keeps it for grace after its Ready condition
//     turned False: a DNS record missing for a while must not drop a live
//     certificate.
//   - Anything else (Domain gone, hostname lost to another Domain or
//     edited, grace over) has no Ingress.
func Decide(d *kurzv1alpha1.Domain, holds bool, existingHost string, grace time.Duration, now time.Time) Decision {
	if d == nil || !holds {
		return Decision{Action: Remove}
	}
	ready := meta.FindStatusCondition(d.Status.Conditions, kurzv1alpha1.ConditionReady)
	// The status speaks of spec.domain only when the claim does: after an
	// edit of spec.domain, Active still means the old hostname until the
	// Domain controller records the new claim.
	current := d.Status.Claim != nil && d.Status.Claim.Hostname == string(d.Spec.Domain)
	if current && d.Status.Phase == kurzv1alpha1.DomainActive && ready != nil && ready.Status == metav1.ConditionTrue {
		return Decision{Action: Apply}
	}
	if !current || existingHost != string(d.Spec.Domain) || ready == nil || ready.Status == metav1.ConditionTrue {
		return Decision{Action: Remove}
	}
	if until := ready.LastTransitionTime.Add(grace); now.Before(until) {
		return Decision{Action: Keep, Wait: until.Sub(now)}
	}
	return Decision{Action: Remove}
}
