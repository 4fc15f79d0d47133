package timestamps

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	kurzv1alpha1 "github.com/kurz-dev/kurz/api/v1alpha1"
)

// Format is how the API prints created_at and updated_at.
const Format = "2006-01-02T15:04:05.000000Z"

// StampLink records now as the link's creation time (once) and as its update
// time when its generation is newer than the last stamped one. It reports
// whether status changed.
func StampLink(l *kurzv1alpha1.Link, now time.Time) bool {
	return stamp(l.Generation, &l.Status.CreatedAt, &l.Status.UpdatedAt, &l.Status.UpdatedGeneration, now)
}

// StampDomain is StampLink for Domains.
func StampDomain(d *kurzv1alpha1.Domain, now time.Time) bool {
	return stamp(d.Generation, &d.Status.CreatedAt, &d.Status.UpdatedAt, &d.Status.UpdatedGeneration, now)
}

// TouchLink is StampLink for an update through the API: it refreshes the
// update time even when the request changed nothing (and so the generation
// did not move), because the contract promises updated_at refreshed by every
// update. It always reports a change.
func TouchLink(l *kurzv1alpha1.Link, now time.Time) bool {
	return touch(l.Generation, &l.Status.CreatedAt, &l.Status.UpdatedAt, &l.Status.UpdatedGeneration, now)
}

// TouchDomain is TouchLink for Domains.
func TouchDomain(d *kurzv1alpha1.Domain, now time.Time) bool {
	return touch(d.Generation, &d.Status.CreatedAt, &d.Status.UpdatedAt, &d.Status.UpdatedGeneration, now)
}

func touch(generation int64, created, updated **metav1.MicroTime, updatedGen *int64, now time.Time) bool {
	*updated = nil
	stamp(generation, created, updated, updatedGen, now)
	return true
}

func stamp(generation int64, created, updated **metav1.MicroTime, updatedGen *int64, now time.Time) bool {
	t := metav1.NewMicroTime(now.UTC().Truncate(time.Microsecond))
	changed := false
	if *created == nil {
		*created = &t
		changed = true
	}
	if *updatedGen < generation || *updated == nil {
		*updated = &t
		*updatedGen = generation
		changed = true
	}
	return changed
}

// Print formats a stamp for the API; a missing stamp (an object the
// controller has not seen yet) falls back to the given metadata time.
func Print(t *metav1.MicroTime, fallback metav1.Time) string {
	if t != nil {
		return t.UTC().Format(Format)
	}
	return fallback.UTC().Format(Format)
}
