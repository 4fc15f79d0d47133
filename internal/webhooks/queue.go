package webhooks

import (
	"context"
	"sync"
	"time"

	kurzv1alpha1 "github.com/kurz-dev/kurz/api/v1alpha1"
)

// delivery is one event to deliver to one Webhook: its signed fields and
// its body (shared between the Webhooks an event goes to: never changed).
type delivery struct {
	typ  kurzv1alpha1.WebhookEvent
	id   string
	body []byte
	// clicks is how many clicks a link.clicked body holds, else 0.
	clicks int
}

// deliveryOverhead is what a queued delivery costs beside its body (the
// struct, its id, the queue's slot), counted against the queue's bytes.
const deliveryOverhead = 128

// A body counts with its capacity: a link.clicked body is its batch's
// buffer, a little larger than its bytes (sendBatch).
func (d *delivery) size() int64 {
	return int64(cap(d.body)) + deliveryOverhead
}

// queue is one Webhook's waiting deliveries, first in first out, bounded
// by bytes (--webhook-queue-bytes): a delivery that does not fit is
// refused, never waited for, so whoever enqueues never blocks.
type queue struct {
	mu    sync.Mutex
	items []*delivery
	head  int
	bytes int64
	limit int64
	// closed: the sender stopped; nothing is queued any more.
	closed bool
	// ready has a token while items is not empty.
	ready chan struct{}
}

func newQueue(limit int64) *queue {
	return &queue{limit: limit, ready: make(chan struct{}, 1)}
}

// pushResult says what push did.
type pushResult int

const (
	pushed pushResult = iota
	full              // it did not fit
	closed            // the queue's sender has stopped
)

// push appends d unless it does not fit or the queue is closed.
func (q *queue) push(d *delivery) pushResult {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.closed {
		return closed
	}
	if q.bytes+d.size() > q.limit {
		return full
	}
	q.items = append(q.items, d)
	q.bytes += d.size()
	queueDepth.Inc()
	queueBytes.Add(float64(d.size()))
	select {
	case q.ready <- struct{}{}:
	default:
	}
	return pushed
}

// pop waits for the first delivery; false when ctx ends first.
func (q *queue) pop(ctx context.Context) (*delivery, bool) {
	for {
		q.mu.Lock()
		if q.head < len(q.items) {
			d := q.items[q.head]
			q.items[q.head] = nil
			q.head++
			if q.head == len(q.items) {
				q.items, q.head = q.items[:0], 0
			} else {
				// More wait: leave the token for the next pop.
				select {
				case q.ready <- struct{}{}:
				default:
				}
			}
			q.bytes -= d.size()
			queueDepth.Dec()
			queueBytes.Sub(float64(d.size()))
			q.mu.Unlock()
			return d, true
		}
		q.mu.Unlock()
		select {
		case <-ctx.Done():
			return nil, false
		case <-q.ready:
		}
	}
}

// drain empties and closes the queue, and returns how many deliveries it
// held.
func (q *queue) drain() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.closed = true
	n := len(q.items) - q.head
	queueDepth.Sub(float64(n))
	queueBytes.Sub(float64(q.bytes))
	q.items, q.head, q.bytes = nil, 0, 0
	return n
}

// sleep waits d or until ctx ends; false when ctx ended.
func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}
