package controllers

import (
	"time"

	"k8s.io/apimachinery/pkg/api/meta"

	kurzv1alpha1 "github.com/kurz-dev/kurz/api/v1alpha1"
)

// Schedule says when a Domain's DNS is checked again. It is derived from
// status alone (lastCheckTime, the Ready condition, updatedAt), so a
// restarted or newly elected controller keeps the same pace and a reconcile
// that is not due changes nothing.
type Schedule struct {
	// Recheck is the wait between checks of an Active domain.
	Recheck time.Duration
	// Backoff is the first wait between checks of a Pending domain; the
	// wait grows with the time the domain has been pending (so it doubles
	// check after check) up to BackoffMax.
	Backoff    time.Duration
	BackoffMax time.Duration
}

// checkDue reports whether d's DNS must be checked now: it never was, its
// spec changed, or its wait is over. A Domain that does not own its
// hostname is checked on the same schedule: its TXT record is what can
// move the hostname to it.
func (s Schedule) checkDue(d *kurzv1alpha1.Domain, now time.Time) bool {
	if d.Status.LastCheckTime == nil || d.Status.ObservedGeneration != d.Generation {
		return true
	}
	ready := meta.FindStatusCondition(d.Status.Conditions, kurzv1alpha1.ConditionReady)
	if ready == nil {
		return true
	}
	switch ready.Reason {
	case kurzv1alpha1.ReasonVerified, kurzv1alpha1.ReasonVerificationPending,
		kurzv1alpha1.ReasonDomainClaimed, kurzv1alpha1.ReasonTXTRequired:
	default:
		return true
	}
	return !now.Before(s.nextCheck(d))
}

// nextCheck is when d's DNS is due again; d has been checked.
func (s Schedule) nextCheck(d *kurzv1alpha1.Domain) time.Time {
	return d.Status.LastCheckTime.Add(s.interval(d))
}

// interval is the wait after d's last check: Recheck when Active, else the
// time d had been pending at that check, bounded by Backoff and BackoffMax.
func (s Schedule) interval(d *kurzv1alpha1.Domain) time.Duration {
	if d.Status.Phase == kurzv1alpha1.DomainActive {
		return s.Recheck
	}
	if d.Status.LastCheckTime == nil {
		return s.Backoff
	}
	var since time.Time
	if c := meta.FindStatusCondition(d.Status.Conditions, kurzv1alpha1.ConditionReady); c != nil {
		since = c.LastTransitionTime.Time
	}
	if d.Status.UpdatedAt != nil && d.Status.UpdatedAt.After(since) {
		since = d.Status.UpdatedAt.Time
	}
	return min(max(d.Status.LastCheckTime.Sub(since), s.Backoff), s.BackoffMax)
}
