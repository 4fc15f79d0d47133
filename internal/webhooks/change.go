package webhooks

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"strconv"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	kurzv1alpha1 "github.com/kurz-dev/kurz/api/v1alpha1"
)

// Change is a change event the controllers saw: a Link or a Domain (a
// copy the dispatcher may keep), the event's type, id and time. Build it
// with LinkChange or DomainChange.
type Change struct {
	Type   kurzv1alpha1.WebhookEvent
	Link   *kurzv1alpha1.Link
	Domain *kurzv1alpha1.Domain
	// ID is the webhook-id: the same for the same change whoever sees it,
	// so receivers drop what a new leader sends again.
	ID string
	// Time is when the change happened (the payload's timestamp).
	Time time.Time
}

// Emitter takes change events from the controllers. Emit never blocks:
// an event that finds the dispatcher's inbox full is dropped and counted.
type Emitter interface {
	// Wants reports whether a Webhook of namespace subscribes to t, so a
	// controller builds no event nobody wants.
	Wants(namespace string, t kurzv1alpha1.WebhookEvent) bool
	// Emit hands c to delivery.
	Emit(c Change)
	// Lead is run while this replica leads: it sends the recent changes a
	// previous leader may have lost (see Dispatcher.Lead) and link.deleted
	// for the Links deleted meanwhile; it returns when ctx ends.
	Lead(ctx context.Context) error
}

// The events of an object's state: each constructor takes the object as
// stored right after the change (which the Change keeps: pass a copy
// nobody changes later) and derives the id and time from that state
// alone, so the controller that wrote the change and a later leader
// resending it (Lead) build the same event. The controllers decide when a
// change happened; these say what it is.

// Created is link.created: a Link reconciled for the first time.
func Created(l *kurzv1alpha1.Link) Change {
	when := l.CreationTimestamp.Time
	if t := l.Status.CreatedAt; t != nil {
		when = t.Time
	}
	return linkChange(kurzv1alpha1.EventLinkCreated, l, "", when)
}

// Updated is link.updated: a Link's generation reconciled.
func Updated(l *kurzv1alpha1.Link) Change {
	when := l.CreationTimestamp.Time
	if t := l.Status.UpdatedAt; t != nil {
		when = t.Time
	}
	return linkChange(kurzv1alpha1.EventLinkUpdated, l, Generation(l.Generation), when)
}

// Expired is link.expired: its Ready reason became Expired at expiresAt.
func Expired(l *kurzv1alpha1.Link) Change {
	var at time.Time
	if l.Spec.ExpiresAt != nil {
		at = l.Spec.ExpiresAt.Time
	}
	return linkChange(kurzv1alpha1.EventLinkExpired, l, At(at), at)
}

// Conflict is link.conflict: its Ready reason became KeyConflict, which
// made it Stalled (the Stalled condition's transition time tells it).
func Conflict(l *kurzv1alpha1.Link) Change {
	at := transition(l.Status.Conditions, kurzv1alpha1.ConditionStalled)
	return linkChange(kurzv1alpha1.EventLinkConflict, l, At(at), at)
}

// Deleted is link.deleted: the Link's last state, deleted at when (its
// deletionTimestamp if it had one).
func Deleted(l *kurzv1alpha1.Link, when time.Time) Change {
	if t := l.DeletionTimestamp; t != nil {
		when = t.Time
	}
	return linkChange(kurzv1alpha1.EventLinkDeleted, l, "", when)
}

// Verified is domain.verified and Unverified domain.unverified: the phase
// changed, and with it Ready's status (its transition time tells it).
func Verified(d *kurzv1alpha1.Domain) Change {
	return domainChange(kurzv1alpha1.EventDomainVerified, d, kurzv1alpha1.ConditionReady)
}

// Unverified is domain.unverified: see Verified.
func Unverified(d *kurzv1alpha1.Domain) Change {
	return domainChange(kurzv1alpha1.EventDomainUnverified, d, kurzv1alpha1.ConditionReady)
}

// TLSReady is domain.tls_ready: its TLSReady condition became True.
func TLSReady(d *kurzv1alpha1.Domain) Change {
	return domainChange(kurzv1alpha1.EventDomainTLSReady, d, kurzv1alpha1.ConditionTLSReady)
}

func linkChange(t kurzv1alpha1.WebhookEvent, l *kurzv1alpha1.Link, discriminator string, when time.Time) Change {
	return Change{Type: t, Link: l, ID: EventID(t, l.UID, discriminator), Time: when}
}

func domainChange(t kurzv1alpha1.WebhookEvent, d *kurzv1alpha1.Domain, condition string) Change {
	at := transition(d.Status.Conditions, condition)
	return Change{Type: t, Domain: d, ID: EventID(t, d.UID, At(at)), Time: at}
}

// transition is when condition typ last changed status (zero without it).
func transition(conds []metav1.Condition, typ string) time.Time {
	if c := meta.FindStatusCondition(conds, typ); c != nil {
		return c.LastTransitionTime.Time
	}
	return time.Time{}
}

// EventID is the webhook-id of an event: "evt_" and 32 hex digits of
// SHA-256 over the type, the object's uid and the discriminator. It has no
// '.', as the Standard Webhooks spec asks of ids.
func EventID(t kurzv1alpha1.WebhookEvent, uid types.UID, discriminator string) string {
	h := sha256.New()
	h.Write([]byte(t))
	h.Write([]byte{0})
	h.Write([]byte(uid))
	h.Write([]byte{0})
	h.Write([]byte(discriminator))
	return "evt_" + hex.EncodeToString(h.Sum(nil)[:16])
}

// Generation is the discriminator of an event that happens once per
// generation (link.updated).
func Generation(g int64) string { return "g" + strconv.FormatInt(g, 10) }

// At is the discriminator of an event that happens at a time a condition
// or the spec records (to the second).
func At(t time.Time) string { return "t" + strconv.FormatInt(t.Unix(), 10) }
