package redirect

import (
	"context"
	"errors"
	"math"

	"github.com/go-logr/logr"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"

	kurzv1alpha1 "github.com/kurz-dev/kurz/api/v1alpha1"
)

// planned is a click patch a write-ahead round computed and spooled as an
// unsure write before sending it.
type planned struct {
	c    *counter
	link *kurzv1alpha1.Link
	u    *unsureWrite
}

// flushDurable is a flush round while the spool is on disk (replayed, or
// written by a round that left something unwritten). A SIGKILL must not
// make the next start replay counts this round writes, so the round writes
// ahead:
//
//  1. settle the unsure writes and compute one patch per clicked Link (from
//     the informer cache), each recorded in f.unsure as if already sent;
//  2. checkpoint the spool: the patches are in it as unsure writes (marker
//     and precondition), the rest as counts; fsync;
//  3. send the patches: answered ones leave f.unsure; the others become
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
func (f *flusher) flushDurable(ctx context.Context, final bool) (written, failed int) {
	log := ctrl.LoggerFrom(ctx).WithName("clicks")
	plan, written, failed, deferred := f.plan(ctx, log, f.q.take(), final)

	wroteAhead := false
	if len(plan) > 0 {
		_, _, err := f.spool.checkpoint(f)
		wroteAhead = err == nil
		if err != nil {
			// Sending now could leave counts in the old file that the
			// server also has. Without the file nothing can count twice.
			if rerr := f.spool.remove(); rerr != nil {
				log.Error(errors.Join(err, rerr), "cannot write or remove the click spool; click patches wait", "path", f.spool.path)
				for _, p := range plan {
					f.unplan(p)
					failed++
					flushFailures.Inc()
				}
				return written, failed
			}
			log.Error(err, "cannot write the click spool: removed; its clicks are held in memory only", "path", f.spool.path)
		}
	}

	// The planned patches are unsure writes now, pending until answered.
	f.publishUnsure()
	stopped := false
	for _, p := range plan {
		if f.unsure[p.c.uid] != p.u {
			continue // given up by the checkpoint (no room): never sent
		}
		if stopped {
			f.unplan(p) // never sent
			failed++
			flushFailures.Inc()
			continue
		}
		err := f.sendPlanned(ctx, p, final)
		switch {
		case err == nil:
			delete(f.unsure, p.c.uid)
			written++
			flushWrites.Inc()
			continue
		case apierrors.IsNotFound(err):
			delete(f.unsure, p.c.uid)
			continue
		}
		failed++
		flushFailures.Inc()
		log.V(1).Info("click flush failed; kept", "link", types.NamespacedName{Namespace: p.c.namespace, Name: p.c.name}, "clicks", p.u.Delta, "error", err.Error())
		switch {
		case apierrors.IsConflict(err):
			// Not proof it was not applied: client-go sends a patch again
			// after a 429 or a 5xx with Retry-After, and the copy sent
			// again conflicts with an applied first one. It stays unsure:
			// the next round finds its marker, or writes its clicks again.
			p.c.requeue(0, p.u.Last)
		case errors.Is(err, errNotSent) || rejected(err):
			f.unplan(p)
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
			f.checkpoint(log)
		}
	} else {
		f.spool.written(log)
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
// clicked Link, recorded in f.unsure (step 1 of flushDurable). It stops at
// the first failure that says kube-apiserver is unreachable, keeping the
// rest. The write-ahead entries may take what the counts leave of the
// spool's cap (see spoolcap.go): the Links past it wait as counts for the
// next round (deferred). One is planned whatever its size, so that every
// round makes progress.
func (f *flusher) plan(ctx context.Context, log logr.Logger, batch []*counter, final bool) (plan []planned, written, failed, deferred int) {
	room := f.spool.writeAheadRoom()
	var unsureBytes int64
	for _, u := range f.unsure {
		unsureBytes += unsureEntrySize(u)
	}
	for i, c := range batch {
		c.queued.Store(false)
		delta, last := c.n.Swap(0), c.last.Load()
		old, unsure := f.unsure[c.uid]
		if !unsure && delta == 0 {
			continue
		}
		p, err := f.prepare(ctx, c, delta, last, final)
		if unsure && f.unsure[c.uid] != old {
			unsureBytes -= unsureEntrySize(old) // settled
		}
		switch {
		case err == nil && p == nil:
			written++ // settled: applied, nothing new
			continue
		case err == nil:
			size := unsureEntrySize(p.u)
			if len(plan) > 0 && unsureBytes+size > room {
				f.unplan(*p)
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
		log.V(1).Info("click flush failed; kept", "link", types.NamespacedName{Namespace: c.namespace, Name: c.name}, "error", err.Error())
		if !rejected(err) {
			failed += f.keep(batch[i+1:])
			break
		}
	}
	return plan, written, failed, deferred
}

// errNotSent: the QPS limiter gave up (ctx done), the patch was not sent.
var errNotSent = errors.New("click patch not sent")

// prepare settles c's unsure write, if any, and computes the patch for
// what is left to write, recorded in f.unsure; nil if nothing is. On
// error the counts are requeued.
func (f *flusher) prepare(ctx context.Context, c *counter, delta, last int64, final bool) (*planned, error) {
	link := types.NamespacedName{Namespace: c.namespace, Name: c.name}
	if u, ok := f.unsure[c.uid]; ok {
		if !final {
			if err := f.limiter.Wait(ctx); err != nil {
				c.requeue(delta, last)
				return nil, err
			}
		}
		applied, err := f.settle(ctx, c, u)
		switch {
		case errors.Is(err, errLinkGone):
			delete(f.unsure, c.uid)
			return nil, err
		case errors.Is(err, errGivenUp):
			applied = true // dropped: not written again
		case err != nil:
			c.requeue(delta, last)
			return nil, err
		}
		delete(f.unsure, c.uid)
		if !applied {
			delta += u.Delta
			last = max(last, u.Last)
		}
	}
	if delta == 0 {
		return nil, nil
	}
	var l kurzv1alpha1.Link
	if err := f.get(ctx, f.cached, link, &l); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, errLinkGone
		}
		c.requeue(delta, last)
		return nil, err
	}
	if l.UID != c.uid {
		return nil, errLinkGone
	}
	u := f.patchFor(&l, delta, last)
	f.unsure[c.uid] = u
	return &planned{c: c, link: &l, u: u}, nil
}

func (f *flusher) sendPlanned(ctx context.Context, p planned, final bool) error {
	if !final {
		if err := f.limiter.Wait(ctx); err != nil {
			return errors.Join(errNotSent, err)
		}
	}
	return f.send(ctx, p.link, p.u.Patch)
}

// unplan turns a planned patch known not to apply back into counts.
func (f *flusher) unplan(p planned) {
	delete(f.unsure, p.c.uid)
	p.c.requeue(p.u.Delta, p.u.Last)
}

// checkpoint writes the spool with what is pending now; see spool.checkpoint.
func (f *flusher) checkpoint(log logr.Logger) {
	links, clicks, err := f.spool.checkpoint(f)
	if err != nil {
		log.Error(err, "cannot write the click spool: a SIGKILL now loses the clicks held in memory", "path", f.spool.path)
		return
	}
	log.V(1).Info("click spool written", "path", f.spool.path, "links", links, "clicks", clicks)
}
