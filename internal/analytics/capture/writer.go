package capture

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/go-logr/logr"

	"github.com/kurz-dev/kurz/internal/analytics"
)

// StoreWriter is the Sink that stores events: it sums identical clicks of a
// minute (analytics.Aggregator), hands a batch to its queue every flush
// (or when BatchRows are held), and one goroutine of its own writes the
// queue to the store. The queue is bounded: a store that is slow or failing
// fills it, and then new batches are dropped and their clicks counted;
// neither the consumer nor the redirect ever waits for the store.
type StoreWriter struct {
	w     analytics.Writer
	o     Options
	agg   *analytics.Aggregator
	seq   uint64
	queue chan analytics.Batch
	done  chan struct{}
	log   logr.Logger

	// ctx ends the writes when Stop runs out of time.
	ctx    context.Context
	cancel context.CancelFunc
	once   sync.Once
}

// NewStoreWriter returns a writer of batches to w; Start runs it.
func NewStoreWriter(w analytics.Writer, o Options, log logr.Logger) *StoreWriter {
	ctx, cancel := context.WithCancel(context.Background())
	return &StoreWriter{
		w: w, o: o, log: log, agg: analytics.NewAggregator(min(o.BatchRows, 1024)),
		queue: make(chan analytics.Batch, o.QueueBatches), done: make(chan struct{}),
		ctx: ctx, cancel: cancel,
	}
}

// Clicked adds e to the batch being aggregated.
func (s *StoreWriter) Clicked(e *analytics.Event) {
	s.agg.Add(*e)
	if s.agg.Len() >= s.o.BatchRows {
		s.Flush()
	}
}

// Flush queues what was aggregated as one batch, or drops and counts it
// when the queue is full.
func (s *StoreWriter) Flush() {
	if s.agg.Len() == 0 {
		return
	}
	n := s.agg.Clicks()
	s.seq++
	b := s.agg.Take(s.o.WriterID + "-" + strconv.FormatUint(s.seq, 10))
	select {
	case s.queue <- b:
	default:
		queueFull.Add(float64(n))
	}
}

// Start runs the writing goroutine until Stop.
func (s *StoreWriter) Start() {
	go func() {
		defer close(s.done)
		for b := range s.queue {
			s.write(b)
		}
	}()
}

// Stop writes what is queued (the consumer flushed its last batch before)
// until ctx is done; what is left then is dropped and counted. Call it
// once, after the last Clicked and Flush.
func (s *StoreWriter) Stop(ctx context.Context) error {
	s.once.Do(func() { close(s.queue) })
	select {
	case <-s.done:
		return nil
	case <-ctx.Done():
		s.cancel()
		<-s.done
		return fmt.Errorf("analytics: the store did not take the last batches in time: %w", ctx.Err())
	}
}

// write tries b WriteAttempts times with the same id (a batch the store
// applied but did not confirm is not stored twice), then drops it.
func (s *StoreWriter) write(b analytics.Batch) {
	var clicks int64
	for i := range b.Events {
		clicks += b.Events[i].Clicks
	}
	backoff := 500 * time.Millisecond
	for attempt := 1; ; attempt++ {
		if s.ctx.Err() != nil {
			droppedTotal.WithLabelValues(dropStopped).Add(float64(clicks))
			return
		}
		ctx, cancel := context.WithTimeout(s.ctx, s.o.WriteTimeout)
		start := time.Now()
		err := s.w.Write(ctx, b)
		cancel()
		if err == nil {
			writeSeconds.Observe(time.Since(start).Seconds())
			rowsWritten.Add(float64(len(b.Events)))
			clicksWritten.Add(float64(clicks))
			return
		}
		writeErrors.Inc()
		if attempt >= s.o.WriteAttempts {
			s.log.Error(err, "analytics batch dropped", "batch", b.ID, "rows", len(b.Events), "clicks", clicks)
			droppedTotal.WithLabelValues(dropStoreFailed).Add(float64(clicks))
			return
		}
		select {
		case <-time.After(backoff):
		case <-s.ctx.Done():
		}
		backoff *= 2
	}
}
