package webhooks

import (
	"context"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
)

// sender delivers one Webhook's events on this replica: its own queue,
// worker and HTTP client, so a receiver that hangs or fails delays no
// other Webhook's deliveries. Deliveries go out one at a time, in order.
type sender struct {
	d   *Dispatcher
	key types.NamespacedName
	cfg atomic.Pointer[senderConfig]
	q   *queue
	fig figures

	cancel context.CancelFunc
	done   chan struct{}
	// stopReason is the drop reason of what is queued when the sender
	// stops: deleted or shutdown.
	stopReason atomic.Value

	// batch is the link.clicked body being filled, its clicks so far
	// without clicksTail, and batchLen their number; only the
	// dispatcher's clicks loop touches them. The buffer is reused from
	// batch to batch.
	batch      []byte
	batchLen   int
	batchStart time.Time
	batchSeq   uint64
}

func (d *Dispatcher) newSender(ctx context.Context, key types.NamespacedName, cfg *senderConfig) *sender {
	ctx, cancel := context.WithCancel(ctx)
	s := &sender{d: d, key: key, q: newQueue(d.o.QueueBytes), cancel: cancel, done: make(chan struct{})}
	s.cfg.Store(cfg)
	s.stopReason.Store(dropShutdown)
	go s.run(ctx)
	return s
}

// run delivers what is queued until the sender stops; then what is left is
// dropped and counted.
func (s *sender) run(ctx context.Context) {
	defer close(s.done)
	defer func() {
		if n := s.q.drain(); n > 0 {
			dropped.WithLabelValues(s.stopReason.Load().(string)).Add(float64(n))
		}
	}()
	for {
		dl, ok := s.q.pop(ctx)
		if !ok {
			return
		}
		s.deliver(ctx, dl)
	}
}

// stop ends the sender (reason: deleted or shutdown) and waits for it.
func (s *sender) stop(reason string) {
	s.stopReason.Store(reason)
	s.cancel()
	<-s.done
	if cfg := s.cfg.Load(); cfg.client != nil {
		cfg.client.CloseIdleConnections()
	}
}

// enqueue queues dl, or drops and counts it when the queue is full.
func (s *sender) enqueue(dl *delivery) {
	switch s.q.push(dl) {
	case full:
		dropped.WithLabelValues(dropQueueFull).Inc()
		return
	case closed:
		dropped.WithLabelValues(s.stopReason.Load().(string)).Inc()
		return
	}
	events.WithLabelValues(string(dl.typ)).Inc()
	if dl.clicks > 0 {
		clicksQueued.Add(float64(dl.clicks))
	}
}

// deliver attempts dl until it succeeds, fails for good or runs out of
// attempts, waiting between attempts (exponential backoff, full jitter).
// The configuration is read for every attempt: an edited Webhook's
// retries go to its new URL with its new limits.
func (s *sender) deliver(ctx context.Context, dl *delivery) {
	log := ctrl.LoggerFrom(ctx)
	for n := 1; ; n++ {
		cfg := s.cfg.Load()
		if cfg.refused != "" {
			dropped.WithLabelValues(dropRefused).Inc()
			return
		}
		keys, err := s.d.signingKeys(ctx, s.key.Namespace, cfg.secret)
		if err != nil {
			// The Webhook is Stalled (SecretNotFound or SecretInvalid):
			// nothing can be signed until someone fixes the Secret.
			dropped.WithLabelValues(dropSecret).Inc()
			return
		}
		start := s.d.now()
		o := attempt(ctx, cfg, keys, dl, start)
		if ctx.Err() != nil && !o.ok() {
			dropped.WithLabelValues(s.stopReason.Load().(string)).Inc()
			return
		}
		end := s.d.now()
		deliveries.WithLabelValues(o.result).Inc()
		deliverySeconds.Observe(end.Sub(start).Seconds())
		s.fig.record(o, end)
		switch {
		case o.ok():
			return
		case o.final:
			reason := dropGone
			if o.result == resultRefused {
				reason = dropRefused
			}
			dropped.WithLabelValues(reason).Inc()
			log.V(1).Info("webhook delivery given up", "webhook", s.key, "id", dl.id, "error", o.lastError)
			return
		case n >= cfg.maxAttempts:
			dropped.WithLabelValues(dropAttempts).Inc()
			log.Info("webhook event dropped after its last attempt", "webhook", s.key, "id", dl.id, "type", dl.typ, "attempts", n, "error", o.lastError)
			return
		}
		if !sleep(ctx, backoff(n, o.retryAfter)) {
			dropped.WithLabelValues(s.stopReason.Load().(string)).Inc()
			return
		}
	}
}

// Backoff between the attempts of one event: full jitter (a random wait
// up to the exponential bound), so receivers that fail together do not
// get the retries together; a Retry-After the receiver sends is honoured
// up to the cap.
const (
	backoffBase = time.Second
	backoffCap  = 5 * time.Minute
)

// backoff is the wait after the n-th failed attempt.
func backoff(n int, retryAfter time.Duration) time.Duration {
	bound := backoffCap
	if n < 20 {
		bound = min(backoffBase<<(n-1), backoffCap)
	}
	d := rand.N(bound) + time.Millisecond
	if retryAfter > d {
		d = min(retryAfter, backoffCap)
	}
	return d
}

// figures are a Webhook's delivery figures as this replica saw them, and
// when they were last written to its status.
type figures struct {
	mu           sync.Mutex
	lastDelivery time.Time
	lastSuccess  time.Time
	failures     int64
	lastError    string
	dirty        bool
	written      time.Time
}

// snapshot is figures as written to status.
type snapshot struct {
	lastDelivery, lastSuccess time.Time
	failures                  int64
	lastError                 string
}

func (f *figures) record(o outcome, at time.Time) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.lastDelivery = at
	if o.ok() {
		f.lastSuccess, f.failures, f.lastError = at, 0, ""
	} else {
		f.failures++
		f.lastError = o.lastError
	}
	f.dirty = true
}

// due returns the figures to write when they changed since the last write
// and that was at least interval ago; it then counts them as written.
func (f *figures) due(now time.Time, interval time.Duration) (snapshot, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.dirty || now.Sub(f.written) < interval {
		return snapshot{}, false
	}
	f.dirty, f.written = false, now
	return snapshot{lastDelivery: f.lastDelivery, lastSuccess: f.lastSuccess, failures: f.failures, lastError: f.lastError}, true
}

// unwritten marks the figures dirty again after a failed write.
func (f *figures) unwritten() {
	f.mu.Lock()
	f.dirty = true
	f.mu.Unlock()
}
