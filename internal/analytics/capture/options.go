package capture

import (
	"errors"
	"time"
)

// Options size the capture and the store writer. They are not flags: the
// defaults bound analytics' memory per replica (see MemoryBound).
type Options struct {
	// RingSize is the capture ring's slots: clicks between two drains of
	// the consumer (every DrainInterval).
	RingSize int
	// DrainInterval is how often the consumer empties the ring.
	DrainInterval time.Duration
	// FlushInterval is how often aggregated rows are handed to the store,
	// aligned to the clock: with a minute, each minute's identical clicks
	// are one row (stores keep minutes).
	FlushInterval time.Duration
	// BatchRows bounds the rows of one batch (the aggregator flushes early
	// when it holds as many).
	BatchRows int
	// QueueBatches bounds the batches waiting for the store; a full queue
	// drops the new batch and counts its clicks.
	QueueBatches int
	// WriteTimeout bounds one Write; WriteAttempts is how often a batch is
	// tried (with the same id, so it is stored once) before it is dropped.
	WriteTimeout  time.Duration
	WriteAttempts int
	// WriterID identifies this process's batches (the pod name and a
	// random suffix).
	WriterID string
}

// DefaultOptions are the production sizes.
func DefaultOptions() Options {
	return Options{
		RingSize:      4096,
		DrainInterval: 20 * time.Millisecond,
		FlushInterval: time.Minute,
		BatchRows:     20000,
		QueueBatches:  2,
		WriteTimeout:  10 * time.Second,
		WriteAttempts: 3,
	}
}

// aggRowBytes is what one row being aggregated takes: the Event (256 B;
// its strings are the consumer's interned ones), its key by value and its
// key by address in the aggregator's maps (216 and 88 B and the maps'
// slack), its count (648 B). batchRowBytes is a row of a queued or
// in-flight batch: the Event alone.
const (
	aggRowBytes   = 648
	batchRowBytes = 256
)

// MemoryBound is the most memory the capture holds at once: the ring's
// slots, the rows being aggregated, the queued and in-flight batches, and
// the consumer's tables (interned strings, links, User-Agent classes).
func (o Options) MemoryBound() int {
	return o.RingSize*SlotBytes + o.BatchRows*aggRowBytes + (o.QueueBatches+1)*o.BatchRows*batchRowBytes + tablesBytes
}

// Validate reports what cannot work.
func (o Options) Validate() error {
	var errs []error
	if o.RingSize < 1 || o.BatchRows < 1 || o.QueueBatches < 1 || o.WriteAttempts < 1 {
		errs = append(errs, errors.New("analytics capture: ring, batch and queue sizes and write attempts must be positive"))
	}
	if o.DrainInterval <= 0 || o.FlushInterval <= 0 || o.WriteTimeout <= 0 {
		errs = append(errs, errors.New("analytics capture: intervals and the write timeout must be positive"))
	}
	if o.WriterID == "" {
		errs = append(errs, errors.New("analytics capture: a writer id is required"))
	}
	return errors.Join(errs...)
}
