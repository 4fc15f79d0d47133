package redirect

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"golang.org/x/time/rate"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kurzv1alpha1 "github.com/kurz-dev/kurz/api/v1alpha1"
)

// clickQueue holds the counters clicked since the last flush.
type clickQueue struct {
	mu  sync.Mutex
	cur []*counter
}

func (q *clickQueue) push(c *counter) {
	q.mu.Lock()
	q.cur = append(q.cur, c)
	q.mu.Unlock()
}

func (q *clickQueue) take() []*counter {
	q.mu.Lock()
	defer q.mu.Unlock()
	out := q.cur
	q.cur = nil
	return out
}

// requeue gives back counts a flush could not write, for the next flush.
func (c *counter) requeue(delta, last int64) {
	c.n.Add(delta)
	for {
		cur := c.last.Load()
		if cur >= last || c.last.CompareAndSwap(cur, last) {
			break
		}
	}
	if c.queued.CompareAndSwap(false, true) {
		c.q.push(c)
	}
}

// maxConflictRetries bounds the re-reads after a conflict within one flush;
// past it, the counts wait for the next flush.
const maxConflictRetries = 5

// flusher writes counted clicks to the Links' status. Its flushes run one at
// a time (the periodic ones, then the final one), never concurrently.
type flusher struct {
	q       *clickQueue
	cached  client.Client // reads from the informer cache, writes to the API
	live    client.Reader // reads from the API, after a conflict
	limiter *rate.Limiter
	// unsure holds, per Link uid, the click patch whose outcome is unknown;
	// the next flush of the Link settles it first.
	unsure map[types.UID]unsureWrite
}

// unsureWrite is a click patch that failed without saying whether the API
// server applied it (a timeout, a dropped connection, a 5xx).
type unsureWrite struct {
	delta  int64 // the clicks it added
	clicks int64 // the status.clicks it set
}

func newFlusher(q *clickQueue, c client.Client, live client.Reader, qps float64) *flusher {
	burst := max(int(qps), 1)
	return &flusher{
		q: q, cached: c, live: live, limiter: rate.NewLimiter(rate.Limit(qps), burst),
		unsure: map[types.UID]unsureWrite{},
	}
}

// run flushes every interval until ctx is done. The final flush is the
// caller's, once no more clicks can arrive.
func (f *flusher) run(ctx context.Context, interval time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			f.flush(ctx, false)
		}
	}
}

// flush writes one status patch per clicked Link. Counts it could not write
// (API unreachable, ctx done) stay queued for the next flush.
//
// The final flush (final) has no next one: it skips the QPS limiter, whose
// Wait fails at once when the wait would pass ctx's deadline, so that only
// the deadline can stop it; what it cannot write is lost, and logged as an
// error with its count.
func (f *flusher) flush(ctx context.Context, final bool) (written, failed int) {
	log := ctrl.LoggerFrom(ctx).WithName("clicks")
	batch := f.q.take()
	var dropped int64
	for i, c := range batch {
		// Unqueue before taking the count: a click racing with us queues the
		// counter again, and at worst the next flush finds nothing to write.
		c.queued.Store(false)
		delta, last := c.n.Swap(0), c.last.Load()
		_, unsure := f.unsure[c.uid]
		if delta == 0 && !unsure {
			continue
		}
		if !final {
			if err := f.limiter.Wait(ctx); err != nil {
				c.requeue(delta, last)
				for _, rest := range batch[i+1:] {
					rest.queued.Store(false)
					_, restUnsure := f.unsure[rest.uid]
					if d := rest.n.Swap(0); d != 0 || restUnsure {
						rest.requeue(d, rest.last.Load())
					}
				}
				failed += len(batch) - i
				flushFailures.Add(float64(len(batch) - i))
				return written, failed
			}
		}
		pending, err := f.settleAndWrite(ctx, c, delta, last)
		link := types.NamespacedName{Namespace: c.namespace, Name: c.name}
		switch {
		case err == nil:
			written++
			flushWrites.Inc()
		case errors.Is(err, errLinkGone):
			// Deleted (or recreated under the same name): nobody can hold
			// these clicks any more.
		case final:
			failed++
			flushFailures.Inc()
			dropped += pending + f.unsure[c.uid].delta // an unsure write may have landed; counted as lost
			log.V(1).Info("final click flush failed", "link", link, "clicks", pending, "error", err.Error())
		default:
			failed++
			flushFailures.Inc()
			c.requeue(pending, last) // queued even when 0, to settle an unsure write
			log.V(1).Info("click flush failed; kept for the next flush", "link", link, "clicks", pending, "error", err.Error())
		}
	}
	switch {
	case failed > 0 && final:
		log.Error(nil, "click counts lost: the final flush could not write them (API server unreachable, or the shutdown timeout passed)", "clicks", dropped, "links", failed)
	case failed > 0:
		log.Info("some click counts could not be written; they are kept for the next flush", "links", failed)
	}
	return written, failed
}

// settleAndWrite writes delta new clicks of c, after settling the Link's
// unsure write if it has one: a live read tells whether that patch was
// applied (status.clicks is what it set) or must be written again. A write
// whose outcome is unknown becomes the new unsure write. On error, pending is
// the count that is neither stored nor held as unsure: the caller keeps it.
func (f *flusher) settleAndWrite(ctx context.Context, c *counter, delta, last int64) (pending int64, err error) {
	if u, ok := f.unsure[c.uid]; ok {
		var l kurzv1alpha1.Link
		err := f.live.Get(ctx, types.NamespacedName{Namespace: c.namespace, Name: c.name}, &l)
		switch {
		case apierrors.IsNotFound(err) || (err == nil && l.UID != c.uid):
			delete(f.unsure, c.uid)
			return 0, errLinkGone
		case err != nil:
			return delta, fmt.Errorf("read link to settle an unknown click write: %w", err)
		}
		delete(f.unsure, c.uid)
		// Applied: the clicks are those it set. Another replica's write since
		// can hide it, and then it is counted again (see the package doc).
		if l.Status.Clicks != u.clicks {
			delta += u.delta
		}
	}
	if delta == 0 {
		return 0, nil
	}
	err = f.write(ctx, c, delta, last)
	if uo, ok := errors.AsType[*unknownOutcome](err); ok {
		f.unsure[c.uid] = unsureWrite{delta: delta, clicks: uo.clicks}
		return 0, err
	}
	return delta, err
}

var errLinkGone = errors.New("link no longer exists")

// clickPatch is the only part of the Link a flush writes: the counters, and
// resourceVersion as the precondition that makes the increment safe.
type clickPatch struct {
	Metadata struct {
		ResourceVersion string `json:"resourceVersion"`
	} `json:"metadata"`
	Status struct {
		Clicks        int64       `json:"clicks"`
		LastClickTime metav1.Time `json:"lastClickTime"`
	} `json:"status"`
}

// write adds delta to the Link's status.clicks with a merge patch that only
// applies to the version it was computed from; on a conflict (another replica
// wrote first) it re-reads from the API and tries again.
func (f *flusher) write(ctx context.Context, c *counter, delta, last int64) error {
	key := types.NamespacedName{Namespace: c.namespace, Name: c.name}
	var reader client.Reader = f.cached
	for attempt := 0; ; attempt++ {
		var l kurzv1alpha1.Link
		if err := reader.Get(ctx, key, &l); err != nil {
			if apierrors.IsNotFound(err) {
				return errLinkGone
			}
			return fmt.Errorf("read link: %w", err)
		}
		if l.UID != c.uid {
			return errLinkGone
		}
		var p clickPatch
		p.Metadata.ResourceVersion = l.ResourceVersion
		p.Status.Clicks = l.Status.Clicks + delta
		p.Status.LastClickTime = metav1.NewTime(time.Unix(0, last).UTC())
		if l.Status.LastClickTime != nil && l.Status.LastClickTime.After(p.Status.LastClickTime.Time) {
			p.Status.LastClickTime = *l.Status.LastClickTime
		}
		body, err := json.Marshal(&p)
		if err != nil {
			return err
		}
		err = f.cached.Status().Patch(ctx, &l, client.RawPatch(types.MergePatchType, body))
		switch {
		case err == nil:
			return nil
		case apierrors.IsNotFound(err):
			return errLinkGone
		case apierrors.IsConflict(err) && attempt < maxConflictRetries:
			reader = f.live
		case rejected(err):
			return fmt.Errorf("patch link status: %w", err)
		default:
			return &unknownOutcome{clicks: p.Status.Clicks, err: err}
		}
	}
}

// unknownOutcome is a patch error that does not say whether the API server
// applied the patch.
type unknownOutcome struct {
	clicks int64 // the status.clicks the patch set
	err    error
}

func (e *unknownOutcome) Error() string {
	return "patch link status (outcome unknown): " + e.err.Error()
}

func (e *unknownOutcome) Unwrap() error { return e.err }

// rejected reports whether err is the API server refusing a request, so the
// request certainly changed nothing.
func rejected(err error) bool {
	return apierrors.IsConflict(err) || apierrors.IsNotFound(err) || apierrors.IsInvalid(err) ||
		apierrors.IsBadRequest(err) || apierrors.IsForbidden(err) || apierrors.IsUnauthorized(err) ||
		apierrors.IsTooManyRequests(err) || apierrors.IsMethodNotSupported(err) ||
		apierrors.IsRequestEntityTooLargeError(err) || apierrors.IsGone(err)
}
