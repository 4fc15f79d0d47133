package redirect

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/time/rate"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// clickQueue holds the counters clicked since the last flush.
type clickQueue struct {
	mu  sync.Mutex
	cur []*counter
	// flushing is the batch the flush round in progress took, so that
	// kurz_clicks_pending still sees its counts (see pending.go).
	flushing []*counter
}

func (q *clickQueue) push(c *counter) {
	q.mu.Lock()
	q.cur = append(q.cur, c)
	q.mu.Unlock()
}

// peek returns the queued counters, leaving them queued.
func (q *clickQueue) peek() []*counter {
	q.mu.Lock()
	defer q.mu.Unlock()
	return slices.Clone(q.cur)
}

// take empties the queue for a flush round; roundDone ends the round.
func (q *clickQueue) take() []*counter {
	q.mu.Lock()
	defer q.mu.Unlock()
	out := q.cur
	q.cur = nil
	q.flushing = out
	return out
}

// roundDone forgets the batch of the round that ended.
func (q *clickQueue) roundDone() {
	q.mu.Lock()
	q.flushing = nil
	q.mu.Unlock()
}

// requeue gives back counts a flush could not write, for the next flush.
func (c *counter) requeue(delta, last int64) {
	c.n.Add(delta)
	c.seen(last)
	if c.queued.CompareAndSwap(false, true) {
		c.q.push(c)
	}
}

// seen raises the counter's latest click time to last.
func (c *counter) seen(last int64) {
	for {
		cur := c.last.Load()
		if cur >= last || c.last.CompareAndSwap(cur, last) {
			return
		}
	}
}

// maxConflictRetries bounds the re-reads after a conflict within one flush;
// past it, the counts wait for the next flush.
const maxConflictRetries = 5

// flusher writes counted clicks to the Links' status. Its flushes run one at
// a time (the periodic ones, then the final one), never concurrently, so it
// never has two writes of one Link in flight.
type flusher struct {
	q       *clickQueue
	cached  client.Reader // the informer cache: the first read of a write
	live    client.Reader // the API: after a conflict, to settle
	writer  client.Client // sends the status patches
	limiter *rate.Limiter
	// writeTimeout bounds each request: a frozen API server must not hold a
	// flush (or the shutdown) forever. timeout is the one of the flush
	// running: the final flush waits at most finalWriteTimeout, so that a
	// frozen API server leaves time to spool before the pod is killed.
	writeTimeout, timeout time.Duration
	marks                 *marker
	// unsure holds, per Link uid, the click patch whose outcome is unknown;
	// the next flush of the Link settles it before writing anything else.
	unsure map[types.UID]*unsureWrite
	// spool, when set, keeps what could not be written: on shutdown, and
	// from a round that left something unwritten until one writes
	// everything; see spool.go and flushDurable.
	spool *spool
	// unsureSeen is a copy of unsure for kurz_clicks_pending, which reads it
	// from the scraping goroutine: unsure belongs to the flush goroutine.
	unsureSeen atomic.Pointer[map[types.UID]int64]
	// inflight is the write being sent by flush, for kurz_clicks_pending:
	// its counts are in no counter meanwhile.
	inflight atomic.Pointer[inflightWrite]
	// droppedClicks is this flusher's share of
	// kurz_redirect_clicks_dropped_total (tests run several in a process).
	droppedClicks atomic.Int64
}

func newFlusher(q *clickQueue, c client.Client, live client.Reader, qps float64) *flusher {
	burst := max(int(qps), 1)
	return &flusher{
		q: q, cached: c, live: live, writer: c, limiter: rate.NewLimiter(rate.Limit(qps), burst),
		writeTimeout: 10 * time.Second,
		marks:        newMarker(),
		unsure:       map[types.UID]*unsureWrite{},
	}
}

// finalWriteTimeout bounds each request of the final flush.
const finalWriteTimeout = 2 * time.Second

// writeTimeoutFor is the per-request timeout of a flush every interval: one
// interval, within [2s, 10s]. A request the API server takes longer to
// answer is settled by the next flush.
func writeTimeoutFor(interval time.Duration) time.Duration {
	return min(max(interval, 2*time.Second), 10*time.Second)
}

// run flushes every interval until ctx is done, at once first when a spool
// was replayed. The final flush is the caller's, once no more clicks can
// arrive.
func (f *flusher) run(ctx context.Context, interval time.Duration) {
	if f.spool != nil && f.spool.onDisk {
		f.flush(ctx, false)
	}
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
// stay queued for the next flush (or the spool). After a failure that says
// the API server is unreachable (a timeout, a refused connection), it stops
// and keeps the rest for the next flush instead of waiting a timeout per
// Link.
//
// The final flush (final) has no next one: it skips the QPS limiter, whose
// Wait fails at once when the wait would pass ctx's deadline, so that only
// the deadline can stop it; what it cannot write goes to the spool, or is
// lost (logged as an error with its count) without one.
func (f *flusher) flush(ctx context.Context, final bool) (written, failed int) {
	log := ctrl.LoggerFrom(ctx).WithName("clicks")
	defer f.roundDone()
	f.timeout = f.writeTimeout
	if final {
		f.timeout = min(f.writeTimeout, finalWriteTimeout)
	}
	if f.spool != nil && f.spool.onDisk {
		return f.flushDurable(ctx, final)
	}
	batch := f.q.take()
	for i, c := range batch {
		// Unqueue before taking the count: a click racing with us queues the
		// counter again, and at worst the next flush finds nothing to write.
		c.queued.Store(false)
		delta, last := c.n.Swap(0), c.last.Load()
		_, unsure := f.unsure[c.uid]
		if delta == 0 && !unsure {
			continue
		}
		var err error
		if !final {
			err = f.limiter.Wait(ctx)
		}
		pending := delta
		if err == nil {
			f.inflight.Store(&inflightWrite{uid: c.uid, clicks: delta})
			pending, err = f.settleAndWrite(ctx, c, delta, last)
			f.inflight.Store(nil)
		}
		link := types.NamespacedName{Namespace: c.namespace, Name: c.name}
		switch {
		case err == nil:
			written++
			flushWrites.Inc()
			continue
		case errors.Is(err, errLinkGone):
			// Deleted (or recreated under the same name): nobody can hold
			// these clicks any more.
			continue
		}
		failed++
		flushFailures.Inc()
		c.requeue(pending, last) // queued even when 0, to settle an unsure write
		log.V(1).Info("click flush failed; kept", "link", link, "clicks", pending, "error", err.Error())
		if rejected(err) {
			continue // this Link's problem; the API server answers
		}
		// Unreachable (or ctx done): keep the rest untouched for later.
		failed += f.keep(batch[i+1:])
		break
	}
	if failed > 0 && !final {
		log.Info("some click counts could not be written; they are kept for the next flush", "links", failed)
	}
	if failed > 0 && !final && f.spool != nil {
		// Something waits (an outage): from now on it is on disk, and
		// every round writes ahead until one writes everything.
		f.checkpoint(log)
	}
	return written, failed
}

// keep puts back the counters of a batch a flush stops before, and returns
// how many had something to write.
func (f *flusher) keep(rest []*counter) (kept int) {
	for _, c := range rest {
		c.queued.Store(false)
		_, unsure := f.unsure[c.uid]
		if d := c.n.Swap(0); d != 0 || unsure {
			c.requeue(d, c.last.Load())
			kept++
			flushFailures.Inc()
		}
	}
	return kept
}

// settleAndWrite writes delta new clicks of c, after settling the Link's
// unsure write if it has one (see settle). A write whose outcome is unknown
// becomes the new unsure write. On error, pending is the count that is
// neither stored nor held as unsure: the caller keeps it.
func (f *flusher) settleAndWrite(ctx context.Context, c *counter, delta, last int64) (pending int64, err error) {
	if u, ok := f.unsure[c.uid]; ok {
		applied, err := f.settle(ctx, c, u)
		switch {
		case errors.Is(err, errLinkGone):
			delete(f.unsure, c.uid)
			return 0, err
		case errors.Is(err, errGivenUp):
			applied = true // dropped: not written again
		case err != nil:
			return delta, fmt.Errorf("settle an unknown click write: %w", err)
		}
		delete(f.unsure, c.uid)
		if !applied {
			delta += u.Delta
			last = max(last, u.Last)
			c.seen(u.Last) // kept by the counter if this write fails
		}
	}
	if delta == 0 {
		return 0, nil
	}
	err = f.write(ctx, c, delta, last)
	if uo, ok := errors.AsType[*unknownOutcome](err); ok {
		f.unsure[c.uid] = uo.write
		return 0, err
	}
	if err != nil {
		return delta, err
	}
	return 0, nil
}

var errLinkGone = errors.New("link no longer exists")

// unknownOutcome is a patch error that does not say whether the API server
// applied the patch (or will: a frozen server may apply it later).
type unknownOutcome struct {
	write *unsureWrite
	err   error
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
