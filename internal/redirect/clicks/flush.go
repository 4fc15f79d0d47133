package clicks

import (
	"context"
	"errors"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	ctrl "sigs.k8s.io/controller-runtime"
)

// maxConflictRetries bounds the re-reads after a conflict within one flush;
// past it, the counts wait for the next flush.
const maxConflictRetries = 5

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
func (w *Writer) flush(ctx context.Context, final bool) (written, failed int) {
	log := ctrl.LoggerFrom(ctx).WithName("clicks")
	defer w.roundDone()
	w.timeout = w.writeTimeout
	if final {
		w.timeout = min(w.writeTimeout, finalWriteTimeout)
	}
	if w.spool != nil && w.spool.onDisk {
		return w.flushDurable(ctx, final)
	}
	batch := w.q.take()
	for i, c := range batch {
		// Unqueue before taking the count: a click racing with us queues the
		// counter again, and at worst the next flush finds nothing to write.
		c.queued.Store(false)
		delta, last := c.n.Swap(0), c.last.Load()
		_, unsure := w.unsure[c.link.UID]
		if delta == 0 && !unsure {
			continue
		}
		var err error
		if !final {
			err = w.limiter.Wait(ctx)
		}
		pending := delta
		if err == nil {
			w.inflight.Store(&inflightWrite{uid: c.link.UID, clicks: delta})
			pending, err = w.settleAndWrite(ctx, c, delta, last)
			w.inflight.Store(nil)
		}
		link := c.link.key()
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
		failed += w.keep(batch[i+1:])
		break
	}
	if failed > 0 && !final {
		log.Info("some click counts could not be written; they are kept for the next flush", "links", failed)
	}
	if failed > 0 && !final && w.spool != nil {
		// Something waits (an outage): from now on it is on disk, and
		// every round writes ahead until one writes everything.
		w.checkpoint(log)
	}
	return written, failed
}

// keep puts back the counters of a batch a flush stops before, and returns
// how many had something to write.
func (w *Writer) keep(rest []*Counter) (kept int) {
	for _, c := range rest {
		c.queued.Store(false)
		_, unsure := w.unsure[c.link.UID]
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
func (w *Writer) settleAndWrite(ctx context.Context, c *Counter, delta, last int64) (pending int64, err error) {
	if u, ok := w.unsure[c.link.UID]; ok {
		applied, err := w.settle(ctx, c, u)
		switch {
		case errors.Is(err, errLinkGone):
			delete(w.unsure, c.link.UID)
			return 0, err
		case errors.Is(err, errGivenUp):
			applied = true // dropped: not written again
		case err != nil:
			return delta, fmt.Errorf("settle an unknown click write: %w", err)
		}
		delete(w.unsure, c.link.UID)
		if !applied {
			delta += u.Delta
			last = max(last, u.Last)
			c.seen(u.Last) // kept by the counter if this write fails
		}
	}
	if delta == 0 {
		return 0, nil
	}
	err = w.write(ctx, c, delta, last)
	if uo, ok := errors.AsType[*unknownOutcome](err); ok {
		w.unsure[c.link.UID] = uo.write
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
