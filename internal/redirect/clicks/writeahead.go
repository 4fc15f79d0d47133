package clicks

import (
	"context"
	"errors"
	"math"

	"github.com/go-logr/logr"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	ctrl "sigs.k8s.io/controller-runtime"

	kurzv1alpha1 "github.com/kurz-dev/kurz/api/v1alpha1"
)

// planned is a click patch a write-ahead round computed and spooled as an
// unsure write before sending it.
type planned struct {
	c    *Counter
	link *kurzv1alpha1.Link
	u    *unsureWrite
}

// flushDurable is a flush round while the spool is on disk (replayed, or
// written by a round that left something unwritten). A SIGKILL must not
// make the next start replay counts this round writes, so the round writes
// ahead:
//
//  1. settle the unsure writes and compute one patch per clicked Link (from
//     the informer cache), each recorded in w.unsure as if already sent;
//  2. checkpoint the spool: the patches are in it as unsure writes (marker
//     and precondition), the rest as counts; fsync;
//  3. send the patches: answered ones leave w.unsure; the others become
//     counts again (rejected, or never sent after the API server stopped
//     answering) or stay unsure (no answer).
//
// A round that writes everything removes the spool (clicks counted during
// it are then only in memory, as in normal operation). Any other round
// leaves its write-ahead checkpoint as it is: its patches, whatever their
// answer, are settled by marker and precondition on the next start, and
// what it lacks was counted during the round (at most a flush interval).
// A round that sent nothing (an outage) checkpoints at its end instead. So
// a round costs one atomic spool write, and the removal once done. A patch
// rejected with a Conflict is not computed again in the same round (that
// would need another write ahead): it stays an unsure write (its retry may
// conflict with its own applied first copy), settled by the next round, so
// its clicks wait one flush interval.
func (w *Writer) flushDurable(ctx context.Context, final bool) (written, failed int) {
	log := ctrl.LoggerFrom(ctx).WithName("clicks")
	plan, written, failed, deferred := w.plan(ctx, log, w.q.take(), final)

	wroteAhead := false
	if len(plan) > 0 {
		_, _, err := w.spool.checkpoint(w)
		wroteAhead = err == nil
		if err != nil {
			// Sending now could leave counts in the old file that the
			// server also has. Without the file nothing can count twice.
			if rerr := w.spool.remove(); rerr != nil {
				log.Error(errors.Join(err, rerr), "cannot write or remove the click spool; click patches wait", "path", w.spool.path)
				for _, p := range plan {
					w.unplan(p)
					failed++
					flushFailures.Inc()
				}
				return written, failed
			}
			log.Error(err, "cannot write the click spool: removed; its clicks are held in memory only", "path", w.spool.path)
		}
	}

	// The planned patches are unsure writes now, pending until answered.
	w.publishUnsure()
	stopped := false
	for _, p := range plan {
		if w.unsure[p.c.link.UID] != p.u {
			continue // given up by the checkpoint (no room): never sent
		}
		if stopped {
			w.unplan(p) // never sent
			failed++
			flushFailures.Inc()
			continue
		}
		err := w.sendPlanned(ctx, p, final)
		switch {
		case err == nil:
			delete(w.unsure, p.c.link.UID)
			written++
			flushWrites.Inc()
			continue
		case apierrors.IsNotFound(err):
			delete(w.unsure, p.c.link.UID)
			continue
		}
		failed++
		flushFailures.Inc()
		log.V(1).Info("click flush failed; kept", "link", p.c.link.key(), "clicks", p.u.Delta, "error", err.Error())
		switch {
		case apierrors.IsConflict(err):
			// Not proof it was not applied: client-go sends a patch again
			// after a 429 or a 5xx with Retry-After, and the copy sent
			// again conflicts with an applied first one. It stays unsure:
			// the next round finds its marker, or writes its clicks again.
			p.c.requeue(0, p.u.Last)
		case errors.Is(err, errNotSent) || rejected(err):
			w.unplan(p)
		default:
			// No answer: it stays unsure, settled by the next round.
			p.c.requeue(0, p.u.Last)
		}
		if !rejected(err) {
			stopped = true
		}
	}

	if final {
		return written, failed // the caller saves what is left
	}
	if failed > 0 || deferred > 0 {
		if failed > 0 {
			log.Info("some click counts could not be written; they are kept for the next flush", "links", failed)
		}
		if deferred > 0 {
			log.V(1).Info("click spool: no room to write ahead the patches of some Links this round; they wait", "links", deferred)
		}
		if !wroteAhead {
			w.checkpoint(log)
		}
	} else {
		w.spool.written(log)
	}
	return written, failed
}

// unsureEntrySize is what u takes in the spool.
func unsureEntrySize(u *unsureWrite) int64 {
	// A uid's length, and the longest count and time the entry may also
	// hold (its Link clicked since): an estimate that does not fall short.
	return entrySize(&spoolLink{UID: "00000000-0000-0000-0000-000000000000", Namespace: u.Namespace, Name: u.Name,
		Clicks: math.MaxInt64, Last: math.MaxInt64, Unsure: u})
}

// plan settles the unsure writes of batch and computes one patch per
// clicked Link, recorded in w.unsure (step 1 of flushDurable). It stops at
// the first failure that says kube-apiserver is unreachable, keeping the
// rest. The write-ahead entries may take what the counts leave of the
// spool's cap (see spoolcap.go): the Links past it wait as counts for the
// next round (deferred). One is planned whatever its size, so that every
// round makes progress.
func (w *Writer) plan(ctx context.Context, log logr.Logger, batch []*Counter, final bool) (plan []planned, written, failed, deferred int) {
	room := w.spool.writeAheadRoom()
	var unsureBytes int64
	for _, u := range w.unsure {
		unsureBytes += unsureEntrySize(u)
	}
	for i, c := range batch {
		c.queued.Store(false)
		delta, last := c.n.Swap(0), c.last.Load()
		old, unsure := w.unsure[c.link.UID]
		if !unsure && delta == 0 {
			continue
		}
		p, err := w.prepare(ctx, c, delta, last, final)
		if unsure && w.unsure[c.link.UID] != old {
			unsureBytes -= unsureEntrySize(old) // settled
		}
		switch {
		case err == nil && p == nil:
			written++ // settled: applied, nothing new
			continue
		case err == nil:
			size := unsureEntrySize(p.u)
			if len(plan) > 0 && unsureBytes+size > room {
				w.unplan(*p)
				deferred++
				continue
			}
			unsureBytes += size
			plan = append(plan, *p)
			continue
		case errors.Is(err, errLinkGone):
			continue
		}
		failed++
		flushFailures.Inc()
		log.V(1).Info("click flush failed; kept", "link", c.link.key(), "error", err.Error())
		if !rejected(err) {
			failed += w.keep(batch[i+1:])
			break
		}
	}
	return plan, written, failed, deferred
}

// errNotSent: the QPS limiter gave up (ctx done), the patch was not sent.
var errNotSent = errors.New("click patch not sent")

// prepare settles c's unsure write, if any, and computes the patch for
// what is left to write, recorded in w.unsure; nil if nothing is. On
// error the counts are requeued.
func (w *Writer) prepare(ctx context.Context, c *Counter, delta, last int64, final bool) (*planned, error) {
	link := c.link.key()
	if u, ok := w.unsure[c.link.UID]; ok {
		if !final {
			if err := w.limiter.Wait(ctx); err != nil {
				c.requeue(delta, last)
				return nil, err
			}
		}
		applied, err := w.settle(ctx, c, u)
		switch {
		case errors.Is(err, errLinkGone):
			delete(w.unsure, c.link.UID)
			return nil, err
		case errors.Is(err, errGivenUp):
			applied = true // dropped: not written again
		case err != nil:
			c.requeue(delta, last)
			return nil, err
		}
		delete(w.unsure, c.link.UID)
		if !applied {
			delta += u.Delta
			last = max(last, u.Last)
		}
	}
	if delta == 0 {
		return nil, nil
	}
	var l kurzv1alpha1.Link
	if err := w.get(ctx, w.cached, link, &l); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, errLinkGone
		}
		c.requeue(delta, last)
		return nil, err
	}
	if l.UID != c.link.UID {
		return nil, errLinkGone
	}
	u := w.patchFor(&l, delta, last)
	w.unsure[c.link.UID] = u
	return &planned{c: c, link: &l, u: u}, nil
}

func (w *Writer) sendPlanned(ctx context.Context, p planned, final bool) error {
	if !final {
		if err := w.limiter.Wait(ctx); err != nil {
			return errors.Join(errNotSent, err)
		}
	}
	return w.send(ctx, p.link, p.u.Patch)
}

// unplan turns a planned patch known not to apply back into counts.
func (w *Writer) unplan(p planned) {
	delete(w.unsure, p.c.link.UID)
	p.c.requeue(p.u.Delta, p.u.Last)
}

// checkpoint writes the spool with what is pending now; see spool.checkpoint.
func (w *Writer) checkpoint(log logr.Logger) {
	links, clicks, err := w.spool.checkpoint(w)
	if err != nil {
		log.Error(err, "cannot write the click spool: a SIGKILL now loses the clicks held in memory", "path", w.spool.path)
		return
	}
	log.V(1).Info("click spool written", "path", w.spool.path, "links", links, "clicks", clicks)
}
