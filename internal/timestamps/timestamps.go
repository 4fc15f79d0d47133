package timestamps

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	kurzv1alpha1 "github.com/kurz-dev/kurz/api/v1alpha1"
)

// Format is how the API prints created_at and updated_at.
const Format = "2006-01-02T15:04:05.000000Z"

// StampLink records the link's creation time (once: now, or its
// creationTimestamp if now is late, see createdAt) and now as its update
// time when its generation is newer than the last stamped one. It reports
// whether status changed.
//
// A Link the API created carries the API's creation time in an annotation
// (Announce): that is its creation time, however late the controller
// comes.
func StampLink(l *kurzv1alpha1.Link, now time.Time) bool {
	return stamp(l.Generation, l.CreationTimestamp, announced(l), &l.Status.CreatedAt, &l.Status.UpdatedAt, &l.Status.UpdatedGeneration, now)
}

// StampDomain is StampLink for Domains.
func StampDomain(d *kurzv1alpha1.Domain, now time.Time) bool {
	return stamp(d.Generation, d.CreationTimestamp, time.Time{}, &d.Status.CreatedAt, &d.Status.UpdatedAt, &d.Status.UpdatedGeneration, now)
}

// TouchLink is StampLink for an update through the API: it refreshes the
// update time even when the request changed nothing (and so the generation
// did not move), because the contract promises updated_at refreshed by every
// update. It always reports a change.
func TouchLink(l *kurzv1alpha1.Link, now time.Time) bool {
	return touch(l.Generation, l.CreationTimestamp, announced(l), &l.Status.CreatedAt, &l.Status.UpdatedAt, &l.Status.UpdatedGeneration, now)
}

// TouchDomain is TouchLink for Domains.
func TouchDomain(d *kurzv1alpha1.Domain, now time.Time) bool {
	return touch(d.Generation, d.CreationTimestamp, time.Time{}, &d.Status.CreatedAt, &d.Status.UpdatedAt, &d.Status.UpdatedGeneration, now)
}

func touch(generation int64, creation metav1.Time, announced time.Time, created, updated **metav1.MicroTime, updatedGen *int64, now time.Time) bool {
	*updated = nil
	stamp(generation, creation, announced, created, updated, updatedGen, now)
	return true
}

// stamp is StampLink and StampDomain; announced is the API's creation
// time from the object's annotation, zero when it has none.
func stamp(generation int64, creation metav1.Time, announced time.Time, created, updated **metav1.MicroTime, updatedGen *int64, now time.Time) bool {
	t := metav1.NewMicroTime(now.UTC().Truncate(time.Microsecond))
	changed := false
	if *created == nil {
		at := announced
		if at.IsZero() {
			at = createdAt(creation, now)
		}
		c := metav1.NewMicroTime(at)
		*created = &c
		if generation <= 1 && *updated == nil {
			// Not edited since its creation: updated then too.
			t = c
		}
		changed = true
	}
	if *updatedGen < generation || *updated == nil {
		*updated = &t
		*updatedGen = generation
		changed = true
	}
	return changed
}

// lateAfter is how long after metadata.creationTimestamp (whole seconds)
// the first stamp may come and still be taken as the creation time.
const lateAfter = 2 * time.Second

// createdAt is the creation time an object first stamped at now gets: now,
// to the microsecond, when the object is that new (the API server stamps
// what it creates at once), else metadata.creationTimestamp, exact to the
// second. A controller that reaches a Link late (a bulk import of 100 000
// settles over minutes, a replica may have been down) must not date it by
// its own arrival: lists are newest first by created_at, and would follow
// the controllers' queue instead of the order of creation.
func createdAt(creation metav1.Time, now time.Time) time.Time {
	now = now.UTC().Truncate(time.Microsecond)
	if creation.IsZero() || now.Sub(creation.Time) < lateAfter {
		return now
	}
	return creation.UTC()
}

// Print formats a stamp for the API; a missing stamp (an object the
// controller has not seen yet) falls back to the given metadata time.
func Print(t *metav1.MicroTime, fallback metav1.Time) string {
	if t != nil {
		return t.UTC().Format(Format)
	}
	return fallback.UTC().Format(Format)
}
