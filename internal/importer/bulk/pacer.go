package bulk

import (
	"context"
	"math"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// pacer keeps the caller's rate limit as the API reports it and makes
// requests wait for it. It mirrors the server's token bucket: limit items
// a minute, refilled continuously, at most limit held.
type pacer struct {
	mu  sync.Mutex
	now func() time.Time
	// changed is closed (and replaced) whenever a waiter may go on.
	changed chan struct{}

	// known: an answer came, so limit is what the API said (0: it sends
	// no limit, nothing to pace).
	known bool
	limit int // items a minute
	// tokens is the estimated bucket at time at, after the reservations
	// of the requests in flight.
	tokens float64
	at     time.Time
	// notBefore is when a 429's Retry-After has passed.
	notBefore time.Time
	// inflight counts requests sent and not answered; reserved, the items
	// they carry.
	inflight, reserved int
	// maxBatch is the largest batch worth sending: the flag, the limit, and
	// halved on a 413.
	maxBatch int
}

func newPacer(maxBatch int, now func() time.Time) *pacer {
	return &pacer{now: now, changed: make(chan struct{}), maxBatch: maxBatch}
}

// batch is the size of the next batch.
func (p *pacer) batch() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.maxBatch
}

// shrink halves the batch size after a 413.
func (p *pacer) shrink(n int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.maxBatch = max(1, min(p.maxBatch, n/2))
}

// delay is how long n items must wait at now: for a Retry-After, for the
// first answer (one request at a time until the limit is known), or for
// the bucket to hold n. ok is false when they must wait for an answer.
func (p *pacer) delay(n int, now time.Time) (d time.Duration, ok bool) {
	if !p.known && p.inflight > 0 {
		return 0, false
	}
	d = p.notBefore.Sub(now)
	if p.known && p.limit > 0 {
		if missing := float64(n) - p.available(now); missing > 0 {
			d = max(d, time.Duration(math.Ceil(missing/p.perSecond()*float64(time.Second))))
		}
	}
	return max(d, 0), true
}

func (p *pacer) perSecond() float64 { return float64(p.limit) / 60 }

// available is the estimated bucket at now.
func (p *pacer) available(now time.Time) float64 {
	if !p.known || p.limit == 0 {
		return math.Inf(1)
	}
	return min(float64(p.limit), p.tokens+now.Sub(p.at).Seconds()*p.perSecond())
}

// wait blocks until n items may be sent and reserves them; done must be
// called with the answer.
func (p *pacer) wait(ctx context.Context, n int) error {
	for {
		p.mu.Lock()
		now := p.now()
		d, ok := p.delay(n, now)
		if ok && d == 0 {
			if p.known && p.limit > 0 {
				p.tokens = p.available(now) - float64(n)
				p.at = now
			}
			p.inflight++
			p.reserved += n
			p.mu.Unlock()
			return nil
		}
		changed := p.changed
		p.mu.Unlock()
		var timer *time.Timer
		var fired <-chan time.Time
		if ok {
			timer = time.NewTimer(d)
			fired = timer.C
		}
		select {
		case <-ctx.Done():
		case <-fired:
		case <-changed:
		}
		if timer != nil {
			timer.Stop()
		}
		if err := ctx.Err(); err != nil {
			return err
		}
	}
}

// done records the answer to a request of n items: the rate-limit headers
// (when sent) reset the estimate, a 429 holds everyone back until its
// Retry-After. h is nil when no answer came (a network error).
func (p *pacer) done(n int, status int, h http.Header, failures int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	now := p.now()
	p.inflight--
	p.reserved -= n
	if h != nil {
		limit, hasLimit := headerInt(h, "X-RateLimit-Limit")
		remaining, hasRemaining := headerInt(h, "X-RateLimit-Remaining")
		if hasLimit && limit > 0 {
			estimate := p.available(now)
			first := !p.known || p.limit != limit
			p.known, p.limit = true, limit
			p.maxBatch = max(1, min(p.maxBatch, limit))
			if hasRemaining {
				// The estimate already paid for every request sent; the
				// server's count may not have yet (those still in flight)
				// or may have (answers arrive out of order), so it can
				// only lower the estimate: other callers of the same
				// ServiceAccount spent it. The refill raises it. The first
				// answer (one request in flight) sets it.
				told := float64(remaining)
				if first {
					told -= float64(p.reserved)
				} else {
					told = min(told, estimate)
				}
				p.tokens, p.at = told, now
			}
		} else {
			p.known, p.limit = true, 0
		}
	}
	// A batch larger than the whole bucket is refused however long it
	// waits: its Retry-After is meaningless, the batch shrinks instead.
	tooLarge := status == http.StatusTooManyRequests && p.limit > 0 && n > p.limit
	if (status == http.StatusTooManyRequests && !tooLarge) || status >= 500 || h == nil {
		wait, ok := retryAfter(h, now)
		if !ok {
			// No Retry-After: back off 1s, 2s, 4s... up to 30s.
			wait = min(30*time.Second, time.Second<<min(max(failures-1, 0), 5))
		}
		p.notBefore = maxTime(p.notBefore, now.Add(wait))
	}
	close(p.changed)
	p.changed = make(chan struct{})
}

// pace is the limit (items a minute, 0 for none), the bucket now and the
// items in flight (already paid for), for the ETA.
func (p *pacer) pace() (limit int, available float64, inflight int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.known || p.limit == 0 {
		return 0, 0, p.reserved
	}
	return p.limit, max(0, p.available(p.now())), p.reserved
}

// retryAfter reads Retry-After: seconds or an HTTP date.
func retryAfter(h http.Header, now time.Time) (time.Duration, bool) {
	if h == nil {
		return 0, false
	}
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return 0, false
	}
	if s, err := strconv.Atoi(v); err == nil && s >= 0 {
		return time.Duration(s) * time.Second, true
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(0, t.Sub(now)), true
	}
	return 0, false
}

func headerInt(h http.Header, name string) (int, bool) {
	n, err := strconv.Atoi(strings.TrimSpace(h.Get(name)))
	return n, err == nil
}

func maxTime(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}
