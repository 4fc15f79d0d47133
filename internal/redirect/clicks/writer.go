package clicks

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"golang.org/x/time/rate"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Writer writes counted clicks to the Links' status. Its flush rounds run
// one at a time (Run's, then Finish's), never concurrently, so it never has
// two writes of one Link in flight.
//
// Its lifecycle follows the redirect server's: Replay once the index holds
// the Links and before the first request is served, Run while serving,
// Finish once no request can click any more.
type Writer struct {
	q          *Queue
	counterFor func(Link) *Counter
	interval   time.Duration
	cached     client.Reader // the informer cache: the first read of a write
	live       client.Reader // the API: after a conflict, to settle
	patcher    client.Client // sends the status patches
	limiter    *rate.Limiter
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
	// droppedClicks is this Writer's share of
	// kurz_redirect_clicks_dropped_total (tests run several in a process).
	droppedClicks atomic.Int64
	// unlistPending takes the Writer out of kurz_clicks_pending (Finish).
	unlistPending func()
}

// New returns the Writer of the clicks counted in q's Counters, writing
// with c (reads from its cache first) and settling with live (reads from
// the API). counterFor returns the Counter the redirect index holds for a
// Link, or nil if it holds none: Replay puts the spool's counts there.
func New(o Options, q *Queue, c client.Client, live client.Reader, counterFor func(Link) *Counter) (*Writer, error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	if err := o.checkSpool(); err != nil {
		return nil, err
	}
	registerMetrics()
	w := newWriter(q, c, live, o.FlushQPS)
	w.counterFor = counterFor
	w.interval = o.FlushInterval
	w.writeTimeout = writeTimeoutFor(o.FlushInterval)
	if o.Spool != "" {
		w.spool = newSpool(o.Spool, o.SpoolSizeLimit)
	}
	return w, nil
}

func newWriter(q *Queue, c client.Client, live client.Reader, qps float64) *Writer {
	burst := max(int(qps), 1)
	return &Writer{
		q: q, cached: c, live: live, patcher: c, limiter: rate.NewLimiter(rate.Limit(qps), burst),
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

// Replay loads the spool a previous process left (with --click-spool) into
// the Counters counterFor returns, and the unanswered writes it holds, for
// Run's first round to write; it sends nothing. Call it once the index
// holds the Links, before serving. From then until Finish, the Writer's
// clicks are in kurz_clicks_pending.
func (w *Writer) Replay(ctx context.Context) error {
	if w.spool != nil {
		if err := w.spool.load(ctrl.LoggerFrom(ctx).WithName("clicks"), w); err != nil {
			return fmt.Errorf("replay the click spool: %w", err)
		}
	}
	w.publishUnsure() // the replayed unknown-outcome writes
	w.unlistPending = pendingClicks.add(w)
	return nil
}

// counter returns the Counter to replay l's clicks into: the index's, or
// one of its own for a Link the index does not hold (deleted meanwhile:
// the next flush finds it gone).
func (w *Writer) counter(l Link) *Counter {
	if w.counterFor != nil {
		if c := w.counterFor(l); c != nil {
			return c
		}
	}
	return w.q.newCounter(l)
}

// Run flushes every interval until ctx is done, at once first when a spool
// was replayed. The final flush is Finish's, once no more clicks can
// arrive.
func (w *Writer) Run(ctx context.Context) {
	if w.spool != nil && w.spool.onDisk {
		w.flush(ctx, false)
	}
	t := time.NewTicker(w.interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			w.flush(ctx, false)
		}
	}
}

// Finish is the final flush, once no click can arrive any more (the
// server drained): it writes what it can until ctx is done, each request
// within 2 s and without the QPS limit, then spools what is left (with
// --click-spool; else those clicks are lost, and logged). Its error says
// the spool could not be written.
func (w *Writer) Finish(ctx context.Context) error {
	if w.unlistPending != nil {
		defer w.unlistPending()
	}
	log := ctrl.LoggerFrom(ctx).WithName("clicks")
	written, failed := w.flush(ctx, true)
	log.Info("final click flush", "links", written, "failed", failed)
	switch {
	case w.spool != nil:
		links, clicks, err := w.spool.save(w)
		switch {
		case err != nil:
			log.Error(err, "click counts lost: the final flush could not write them and the spool cannot be written", "path", w.spool.path, "links", failed)
			return fmt.Errorf("write click spool: %w", err)
		case links > 0:
			log.Info("clicks the final flush could not write are spooled for the next start", "path", w.spool.path, "links", links, "clicks", clicks)
		}
	case failed > 0:
		log.Error(nil, "click counts lost: the final flush could not write them (API server unreachable, or the shutdown timeout passed) and there is no --click-spool", "links", failed)
	}
	return nil
}
