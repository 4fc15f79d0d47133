package webhooks

import (
	"crypto/sha256"
	"encoding/hex"
	"strconv"
	"time"

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
}

// LinkChange is a link.* event of l (which the Change keeps: pass a
// copy nobody changes later). discriminator tells this change from others
// of the same type and Link (a generation, a transition time), and when
// is when it happened.
func LinkChange(t kurzv1alpha1.WebhookEvent, l *kurzv1alpha1.Link, discriminator string, when time.Time) Change {
	return Change{Type: t, Link: l, ID: EventID(t, l.UID, discriminator), Time: when}
}

// DomainChange is a domain.* event of d; see LinkChange.
func DomainChange(t kurzv1alpha1.WebhookEvent, d *kurzv1alpha1.Domain, discriminator string, when time.Time) Change {
	return Change{Type: t, Domain: d, ID: EventID(t, d.UID, discriminator), Time: when}
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

// At is the discriminator of an event that happens at a transition:
// its time, to the second (what a condition records), and the generation
// it was seen in.
func At(g int64, t time.Time) string {
	return Generation(g) + "@" + strconv.FormatInt(t.Unix(), 10)
}
