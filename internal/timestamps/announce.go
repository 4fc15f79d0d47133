package timestamps

import (
	"time"

	kurzv1alpha1 "github.com/kurz-dev/kurz/api/v1alpha1"
)

// announceSkew is how far from metadata.creationTimestamp (whole seconds,
// set by kube-apiserver) an announced creation time may be and still be
// the Link's own: the API stamps just before it sends the create, which
// may wait in kube-apiserver's queues under load, and two machines' clocks
// differ a little. A manifest copied from another Link (kubectl get -o
// yaml, applied again later) carries that Link's time, mostly far older.
const announceSkew = time.Minute

// Announce puts now into l, which the API is about to create, as its
// creation time (kurzv1alpha1.LinkCreatedAtAnnotation). The controller's
// first status write carries it into status (StampLink): no write of the
// API's own stamps the new Link, and until the controller has written,
// readers take the time from here (LinkCreated, LinkUpdated).
func Announce(l *kurzv1alpha1.Link, now time.Time) {
	if l.Annotations == nil {
		l.Annotations = map[string]string{}
	}
	l.Annotations[kurzv1alpha1.LinkCreatedAtAnnotation] = now.UTC().Truncate(time.Microsecond).Format(Format)
}

// announced returns the creation time the API announced in l, or zero
// when l has none that is its own (see announceSkew), or a bad one.
func announced(l *kurzv1alpha1.Link) time.Time {
	v, ok := l.Annotations[kurzv1alpha1.LinkCreatedAtAnnotation]
	if !ok || l.CreationTimestamp.IsZero() {
		return time.Time{}
	}
	t, err := time.Parse(time.RFC3339Nano, v)
	if err != nil {
		return time.Time{}
	}
	t = t.UTC().Truncate(time.Microsecond)
	if d := t.Sub(l.CreationTimestamp.Time); d < -announceSkew || d > announceSkew {
		return time.Time{}
	}
	return t
}

// LinkCreated is the link's created_at: status.createdAt, else (the
// controller has not written yet) the time the API announced, else
// metadata.creationTimestamp.
func LinkCreated(l *kurzv1alpha1.Link) time.Time {
	if t := l.Status.CreatedAt; t != nil {
		return t.Time
	}
	if t := announced(l); !t.IsZero() {
		return t
	}
	return l.CreationTimestamp.Time
}

// LinkUpdated is the link's updated_at: status.updatedAt, else the
// creation time LinkCreated falls back to (a Link not yet stamped was
// updated when it was created, as its first stamp will say).
func LinkUpdated(l *kurzv1alpha1.Link) time.Time {
	if t := l.Status.UpdatedAt; t != nil {
		return t.Time
	}
	if t := announced(l); !t.IsZero() {
		return t
	}
	return l.CreationTimestamp.Time
}
