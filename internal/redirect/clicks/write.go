package clicks

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kurzv1alpha1 "github.com/kurz-dev/kurz/api/v1alpha1"
)

const (
	// clickWriterRetention and maxClickWriters bound status.clickWriters:
	// an entry is needed only until its writer settles its unanswered write.
	clickWriterRetention = 24 * time.Hour
	maxClickWriters      = 16
)

// marker is this process's identity as a click writer and its write
// sequence. The identity is new for every process: a restarted process
// numbers its writes from 1 again, and a reused name could make it mistake
// its predecessor's marker for its own.
type marker struct {
	id  string
	mu  sync.Mutex
	seq int64
	now func() time.Time
}

func newMarker() *marker {
	name := os.Getenv("POD_NAME")
	if name == "" {
		name, _ = os.Hostname()
	}
	if len(name) > 100 {
		name = name[:100]
	}
	b := make([]byte, 4)
	_, _ = rand.Read(b) // never fails (crypto/rand panics instead)
	return &marker{id: name + "-" + hex.EncodeToString(b), now: time.Now}
}

// next returns this process's marker for a new write.
func (m *marker) next() kurzv1alpha1.ClickWriter {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.seq++
	// metav1.Time travels with second precision: keep what is stored.
	return kurzv1alpha1.ClickWriter{ID: m.id, Seq: m.seq, Time: metav1.NewTime(m.now().Truncate(time.Second))}
}

// unsureWrite is a click patch that failed without saying whether the API
// server applied it (a timeout, a dropped connection, a 5xx). It is kept
// whole, to be sent again unchanged, and is spooled as JSON.
type unsureWrite struct {
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	// Writer is the marker the patch carries (writer id, seq, time).
	Writer kurzv1alpha1.ClickWriter `json:"writer"`
	// ResourceVersion is the patch's precondition.
	ResourceVersion string `json:"resourceVersion"`
	// Delta and Last are the clicks it adds and its lastClickTime (unix ns).
	Delta int64 `json:"delta"`
	Last  int64 `json:"last"`
	// Patch is the merge patch, byte for byte.
	Patch json.RawMessage `json:"patch"`
	// refusals counts the times kube-apiserver refused the patch sent
	// again at its unchanged precondition (see settle); not spooled.
	refusals int
}

// clickPatch is the only part of the Link a flush writes: the counters, this
// writer's marker in status.clickWriters, and resourceVersion as the
// precondition that makes the increment and the marker safe. A merge patch
// replaces lists whole: the list is the one read, with our entry set and
// old ones pruned, and the precondition guarantees nobody changed it since.
type clickPatch struct {
	Metadata struct {
		ResourceVersion string `json:"resourceVersion"`
	} `json:"metadata"`
	Status struct {
		Clicks                    int64                      `json:"clicks"`
		LastClickTime             metav1.Time                `json:"lastClickTime"`
		ClickWriters              []kurzv1alpha1.ClickWriter `json:"clickWriters"`
		ClickWritersPrunedThrough *metav1.Time               `json:"clickWritersPrunedThrough,omitempty"`
	} `json:"status"`
}

// write adds delta to the Link's status.clicks with a merge patch that only
// applies to the version it was computed from; on a conflict (another replica
// wrote first) it re-reads from the API and tries again.
//
// A conflict does not prove the patch was not applied: client-go sends a
// patch again after a 429 or a 5xx with Retry-After, and if the first copy
// was applied, the copy sent again conflicts with it. So after a conflict
// the Link read again is searched for the patch's marker first.
func (w *Writer) write(ctx context.Context, c *Counter, delta, last int64) error {
	key := c.link.key()
	reader := w.cached
	var conflicted *unsureWrite // the patch that got the conflict
	for attempt := 0; ; attempt++ {
		var l kurzv1alpha1.Link
		if err := w.get(ctx, reader, key, &l); err != nil {
			if apierrors.IsNotFound(err) {
				return errLinkGone
			}
			if conflicted != nil {
				// Applied or not: only a read tells, later.
				return &unknownOutcome{write: conflicted, err: fmt.Errorf("read link after a conflict: %w", err)}
			}
			return fmt.Errorf("read link: %w", err)
		}
		if l.UID != c.link.UID {
			return errLinkGone
		}
		if conflicted != nil && hasMarker(&l, conflicted.Writer) {
			return nil // applied, and its retry conflicted with it
		}
		u := w.patchFor(&l, delta, last)
		err := w.send(ctx, &l, u.Patch)
		switch {
		case err == nil:
			return nil
		case apierrors.IsNotFound(err):
			return errLinkGone
		case apierrors.IsConflict(err) && attempt < maxConflictRetries:
			reader = w.live
			conflicted = u
		case apierrors.IsConflict(err):
			// Out of retries, and this copy may be applied (see above).
			return &unknownOutcome{write: u, err: err}
		case rejected(err):
			return fmt.Errorf("patch link status: %w", err)
		default:
			return &unknownOutcome{write: u, err: err}
		}
	}
}

// patchFor builds the patch adding delta clicks to l as read.
func (w *Writer) patchFor(l *kurzv1alpha1.Link, delta, last int64) *unsureWrite {
	var p clickPatch
	p.Metadata.ResourceVersion = l.ResourceVersion
	p.Status.Clicks = l.Status.Clicks + delta
	p.Status.LastClickTime = metav1.NewTime(time.Unix(0, last).UTC())
	if l.Status.LastClickTime != nil && l.Status.LastClickTime.After(p.Status.LastClickTime.Time) {
		p.Status.LastClickTime = *l.Status.LastClickTime
	}
	mine := w.marks.next()
	p.Status.ClickWriters, p.Status.ClickWritersPrunedThrough = pruneWriters(
		l.Status.ClickWriters, l.Status.ClickWritersPrunedThrough, mine, w.marks.now())
	body, err := json.Marshal(&p)
	if err != nil {
		panic(err) // plain structs: cannot fail
	}
	return &unsureWrite{
		Namespace: l.Namespace, Name: l.Name, Writer: mine, ResourceVersion: l.ResourceVersion,
		Delta: delta, Last: last, Patch: body,
	}
}

// pruneWriters returns the writers list with mine set (replacing this
// writer's previous entry, whose write is settled: a writer settles before it
// writes again), without entries past the retention, and the oldest dropped
// past maxClickWriters. prunedThrough advances to the newest time dropped.
func pruneWriters(old []kurzv1alpha1.ClickWriter, prunedThrough *metav1.Time, mine kurzv1alpha1.ClickWriter, now time.Time) ([]kurzv1alpha1.ClickWriter, *metav1.Time) {
	out := make([]kurzv1alpha1.ClickWriter, 0, min(len(old)+1, maxClickWriters))
	out = append(out, mine)
	keep := slices.Clone(old)
	// Newest first, so the oldest fall off past the cap.
	slices.SortStableFunc(keep, func(a, b kurzv1alpha1.ClickWriter) int { return b.Time.Compare(a.Time.Time) })
	var through *metav1.Time
	if prunedThrough != nil {
		through = prunedThrough.DeepCopy()
	}
	drop := func(w kurzv1alpha1.ClickWriter) {
		if through == nil || w.Time.After(through.Time) {
			through = w.Time.DeepCopy()
		}
	}
	for _, w := range keep {
		switch {
		case w.ID == mine.ID:
		case now.Sub(w.Time.Time) > clickWriterRetention, len(out) >= maxClickWriters:
			drop(w)
		default:
			out = append(out, w)
		}
	}
	return out, through
}

// send sends a click patch within the flush's timeout.
func (w *Writer) send(ctx context.Context, l *kurzv1alpha1.Link, body []byte) error {
	ctx, cancel := context.WithTimeout(ctx, w.timeout)
	defer cancel()
	return w.patcher.Status().Patch(ctx, l, client.RawPatch(types.MergePatchType, body))
}

// get reads within the flush's timeout.
func (w *Writer) get(ctx context.Context, r client.Reader, key types.NamespacedName, l *kurzv1alpha1.Link) error {
	ctx, cancel := context.WithTimeout(ctx, w.timeout)
	defer cancel()
	return r.Get(ctx, key, l)
}

// settle finds out whether u was applied, for good: true if its clicks are
// stored, false if they are not and never will be (the caller writes them
// again), an error if that cannot be known yet (u stays unsure).
//
// Why this is exact: u carries the precondition resourceVersion R and the
// marker (writer, seq). Only u (and its identical resends) carry that
// marker, and only this writer replaces its own entry, after settling. So:
//   - the live Link shows the marker: u was applied (once: every copy of u
//     requires R, and the first to apply changes it);
//   - it shows neither the marker nor R: u was not applied, and never will
//     be, since a resourceVersion never comes back;
//   - it still has R: u was not applied yet but may still be (a frozen API
//     server applies what it queued when it resumes). Sending u again
//     decides it: whichever copy applies first makes every other one fail
//     with a Conflict, and on a Conflict we read again.
//
// The one gap: another writer may have pruned our entry (it was older than
// a day, or more than maxClickWriters wrote since). clickWritersPrunedThrough
// then is not older than our marker; the clicks are written again, and the
// possible double count is logged.
func (w *Writer) settle(ctx context.Context, c *Counter, u *unsureWrite) (applied bool, err error) {
	key := c.link.key()
	for attempt := 0; ; attempt++ {
		var l kurzv1alpha1.Link
		err := w.get(ctx, w.live, key, &l)
		switch {
		case apierrors.IsNotFound(err) || (err == nil && l.UID != c.link.UID):
			return false, errLinkGone
		case err != nil:
			return false, fmt.Errorf("read link: %w", err)
		}
		if hasMarker(&l, u.Writer) {
			return true, nil
		}
		if l.ResourceVersion != u.ResourceVersion {
			if p := l.Status.ClickWritersPrunedThrough; p != nil && !u.Writer.Time.After(p.Time) {
				ctrl.LoggerFrom(ctx).WithName("clicks").Error(nil,
					"cannot tell whether an unanswered click write was applied (its marker may have been pruned); writing its clicks again, they may be counted twice",
					"link", key, "clicks", u.Delta, "sent", u.Writer.Time.Time)
			}
			return false, nil
		}
		if attempt >= maxConflictRetries {
			return false, fmt.Errorf("link %s keeps changing", key)
		}
		err = w.send(ctx, &l, u.Patch)
		switch {
		case err == nil:
			return true, nil
		case apierrors.IsConflict(err):
			// u, or someone else, got there first: the next read tells.
		case apierrors.IsNotFound(err):
			return false, errLinkGone
		case refusedForGood(err):
			// The same bytes at the same resourceVersion get the same
			// answer every time (a schema or an authorization that changed
			// since it was first sent): held, it would keep its clicks, the
			// Link's later ones and the spool forever.
			u.refusals++
			if u.refusals >= maxRefusals {
				w.dropped(reasonRefused, u.Delta)
				ctrl.LoggerFrom(ctx).WithName("clicks").Error(err,
					"giving up an unanswered click write that kube-apiserver refuses at an unchanged resourceVersion; its clicks are dropped (and were not applied, unless its first copy is still in flight)",
					"link", key, "clicks", u.Delta, "refusals", u.refusals, "sent", u.Writer.Time.Time)
				return false, errGivenUp
			}
			return false, fmt.Errorf("send an unknown click write again (refused %d of %d times before it is given up): %w", u.refusals, maxRefusals, err)
		default:
			// Even a rejection leaves the first copy of u in flight.
			return false, fmt.Errorf("send an unknown click write again: %w", err)
		}
	}
}

// maxRefusals is how many times in a row kube-apiserver may refuse an
// unanswered click write sent again at its unchanged precondition before
// the write is given up: a flush round sends it once, so at least ten
// flush intervals.
const maxRefusals = 10

// errGivenUp: settle gave up an unanswered write (counted and logged); its
// clicks are not written again.
var errGivenUp = errors.New("unanswered click write given up")

// refusedForGood reports whether err refuses a request for what it is (its
// body, its sender), so that the same request would be refused again.
func refusedForGood(err error) bool {
	return apierrors.IsForbidden(err) || apierrors.IsInvalid(err) || apierrors.IsBadRequest(err) ||
		apierrors.IsRequestEntityTooLargeError(err) || apierrors.IsMethodNotSupported(err)
}

// hasMarker reports whether l carries the marker w: the write that carried
// it was applied.
func hasMarker(l *kurzv1alpha1.Link, w kurzv1alpha1.ClickWriter) bool {
	for _, m := range l.Status.ClickWriters {
		if m.ID == w.ID && m.Seq == w.Seq {
			return true
		}
	}
	return false
}
