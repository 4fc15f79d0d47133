package capture

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/go-logr/logr"

	"github.com/kurz-dev/kurz/internal/analytics"
)

// Output is one destination of the aggregated batches: the store, an
// OTLP exporter. Each has its own bounded queue and goroutine, so a slow
// destination drops its own batches and never delays another.
type Output struct {
	// Name is "store" for the store, else the prefix of its drop reasons
	// ("otlp": otlp_queue_full, otlp_failed, otlp_stopped).
	Name string
	W    analytics.Writer
	// Attempts is how often a batch is tried; 0: Options.WriteAttempts.
	// An exporter that cannot tell a batch it got twice (OTLP) takes 1 and
	// retries inside its Write.
	Attempts int
	// Timeout bounds one Write; 0: Options.WriteTimeout.
	Timeout time.Duration
}

// StoreOutput is the name of the store's Output.
const StoreOutput = "store"

// StoreWriter is the Sink that writes events: it sums identical clicks of
// a minute (analytics.Aggregator), hands a batch to each output's queue
// every flush (or when BatchRows are held), and one goroutine per output
// writes its queue. The queues are bounded: a destination that is slow or
// failing fills its queue, and then new batches for it are dropped and
// their clicks counted; neither the consumer, the redirect nor the other
// outputs ever wait for it. Batches are shared between the outputs: a
// Writer must not modify one.
type StoreWriter struct {
	o    Options
	agg  *analytics.Aggregator
	seq  uint64
	outs []*outQueue
	log  logr.Logger
	once sync.Once
}

// outQueue is one output's queue and writing goroutine.
type outQueue struct {
	Output
	queue chan analytics.Batch
	done  chan struct{}
	log   logr.Logger
	// reasons are the drop reasons of this output: queue full, failed,
	// stopped.
	full, failed, stopped string
	// ctx ends the writes when Stop runs out of time.
	ctx    context.Context
	cancel context.CancelFunc
}

// NewStoreWriter returns a writer of batches to w; Start runs it.
func NewStoreWriter(w analytics.Writer, o Options, log logr.Logger) *StoreWriter {
	return NewWriter(o, log, Output{Name: StoreOutput, W: w})
}

// NewWriter returns a writer of the same batches to every output; Start
// runs it.
func NewWriter(o Options, log logr.Logger, outs ...Output) *StoreWriter {
	s := &StoreWriter{o: o, log: log, agg: analytics.NewAggregator(min(o.BatchRows, 1024))}
	for _, out := range outs {
		if out.Attempts < 1 {
			out.Attempts = o.WriteAttempts
		}
		if out.Timeout <= 0 {
			out.Timeout = o.WriteTimeout
		}
		ctx, cancel := context.WithCancel(context.Background())
		q := &outQueue{
			Output: out, queue: make(chan analytics.Batch, o.QueueBatches), done: make(chan struct{}),
			log: log, ctx: ctx, cancel: cancel,
			full: dropQueueFull, failed: dropStoreFailed, stopped: dropStopped,
		}
		if out.Name != StoreOutput {
			q.full, q.failed, q.stopped = out.Name+"_"+dropQueueFull, out.Name+"_failed", out.Name+"_"+dropStopped
		}
		s.outs = append(s.outs, q)
	}
	return s
}

// setLogger replaces the logger (the consumer's, once it runs).
func (s *StoreWriter) setLogger(log logr.Logger) {
	s.log = log
	for _, q := range s.outs {
		q.log = log
	}
}

// Clicked adds e to the batch being aggregated.
func (s *StoreWriter) Clicked(e *analytics.Event) {
	s.agg.Count(e)
	if s.agg.Len() >= s.o.BatchRows {
		s.Flush()
	}
}

// Flush queues what was aggregated as one batch on every output, or drops
// and counts it for an output whose queue is full.
func (s *StoreWriter) Flush() {
	if s.agg.Len() == 0 {
		return
	}
	n := s.agg.Clicks()
	s.seq++
	b := s.agg.Take(s.o.WriterID + "-" + strconv.FormatUint(s.seq, 10))
	for _, q := range s.outs {
		select {
		case q.queue <- b:
		default:
			droppedTotal.WithLabelValues(q.full).Add(float64(n))
		}
	}
}

// Start runs the writing goroutines until Stop.
func (s *StoreWriter) Start() {
	for _, q := range s.outs {
		go func() {
			defer close(q.done)
			for b := range q.queue {
				q.write(b)
			}
		}()
	}
}

// Stop writes what is queued (the consumer flushed its last batch before)
// until ctx is done; what is left then is dropped and counted. Call it
// once, after the last Clicked and Flush.
func (s *StoreWriter) Stop(ctx context.Context) error {
	s.once.Do(func() {
		for _, q := range s.outs {
			close(q.queue)
		}
	})
	var errs []error
	for _, q := range s.outs {
		select {
		case <-q.done:
		case <-ctx.Done():
			q.cancel()
			<-q.done
			errs = append(errs, fmt.Errorf("analytics: the %s did not take the last batches in time: %w", q.Name, ctx.Err()))
		}
	}
	return errors.Join(errs...)
}

// write tries b Attempts times with the same id (a batch the store
// applied but did not confirm is not stored twice), then drops it.
func (q *outQueue) write(b analytics.Batch) {
	var clicks int64
	for i := range b.Events {
		clicks += b.Events[i].Clicks
	}
	store := q.Name == StoreOutput
	backoff := 500 * time.Millisecond
	for attempt := 1; ; attempt++ {
		if q.ctx.Err() != nil {
			droppedTotal.WithLabelValues(q.stopped).Add(float64(clicks))
			return
		}
		ctx, cancel := context.WithTimeout(q.ctx, q.Timeout)
		start := time.Now()
		err := q.W.Write(ctx, b)
		cancel()
		if err == nil {
			if store {
				writeSeconds.Observe(time.Since(start).Seconds())
				rowsWritten.Add(float64(len(b.Events)))
				clicksWritten.Add(float64(clicks))
			} else {
				exportedClicks.WithLabelValues(q.Name).Add(float64(clicks))
			}
			return
		}
		if store {
			writeErrors.Inc()
		} else {
			exportErrors.WithLabelValues(q.Name).Inc()
		}
		if attempt >= q.Attempts {
			q.log.Error(err, "analytics batch dropped", "output", q.Name, "batch", b.ID, "rows", len(b.Events), "clicks", clicks)
			droppedTotal.WithLabelValues(q.failed).Add(float64(clicks))
			return
		}
		select {
		case <-time.After(backoff):
		case <-q.ctx.Done():
		}
		backoff *= 2
	}
}
