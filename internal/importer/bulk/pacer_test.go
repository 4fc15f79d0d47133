package bulk

import (
	"context"
	"net/http"
	"testing"
	"time"

	. "github.com/onsi/gomega"

	"github.com/kurz-dev/kurz/internal/optionstest"
)

func headers(kv ...string) http.Header {
	h := http.Header{}
	for i := 0; i < len(kv); i += 2 {
		h.Set(kv[i], kv[i+1])
	}
	return h
}

// delayOf is p.delay when it is a time to wait.
func delayOf(g Gomega, p *pacer, n int, at time.Time) time.Duration {
	d, ok := p.delay(n, at)
	g.Expect(ok).To(BeTrue(), "a time to wait, not an answer")
	return d
}

func TestPacer(t *testing.T) {
	g := NewWithT(t)
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	p := newPacer(100, func() time.Time { return now })

	d, ok := p.delay(100, now)
	g.Expect(ok).To(BeTrue())
	g.Expect(d).To(BeZero(), "nothing known: the first request goes")
	p.inflight, p.reserved = 1, 100
	_, ok = p.delay(100, now)
	g.Expect(ok).To(BeFalse(), "one request at a time until an answer tells the limit")

	// 600 a minute, 450 left after this batch.
	p.done(100, http.StatusOK, headers("X-RateLimit-Limit", "600", "X-RateLimit-Remaining", "450"), 0)
	g.Expect(delayOf(g, p, 100, now)).To(Equal(time.Duration(0)))
	p.tokens = 50
	g.Expect(delayOf(g, p, 100, now)).To(Equal(5*time.Second), "50 missing at 10 a second")
	g.Expect(delayOf(g, p, 100, now.Add(2*time.Second))).To(Equal(3 * time.Second))
	limit, available, inflight := p.pace()
	g.Expect(limit).To(Equal(600))
	g.Expect(available).To(Equal(50.0))
	g.Expect(inflight).To(BeZero())

	// An answer only lowers the estimate (answers may come out of order).
	p.inflight, p.reserved = 1, 10
	p.done(10, http.StatusOK, headers("X-RateLimit-Limit", "600", "X-RateLimit-Remaining", "400"), 0)
	g.Expect(p.tokens).To(Equal(50.0))
	p.inflight, p.reserved = 1, 10
	p.done(10, http.StatusOK, headers("X-RateLimit-Limit", "600", "X-RateLimit-Remaining", "20"), 0)
	g.Expect(p.tokens).To(Equal(20.0))

	// A 429 holds back until its Retry-After, and empties the bucket.
	p.inflight, p.reserved = 1, 10
	p.done(10, http.StatusTooManyRequests, headers("Retry-After", "7", "X-RateLimit-Limit", "600", "X-RateLimit-Remaining", "0"), 0)
	g.Expect(delayOf(g, p, 1, now)).To(Equal(7 * time.Second))
	g.Expect(delayOf(g, p, 100, now)).To(Equal(10*time.Second), "the bucket's wait when longer")

	// A batch larger than the bucket: no wait, the batch shrinks.
	p.notBefore = time.Time{}
	p.inflight, p.reserved = 1, 700
	p.done(700, http.StatusTooManyRequests, headers("Retry-After", "10", "X-RateLimit-Limit", "600", "X-RateLimit-Remaining", "600"), 0)
	g.Expect(p.notBefore.IsZero()).To(BeTrue(), "its Retry-After is not waited for")

	// A smaller limit caps the batch.
	p.inflight = 1
	p.done(0, http.StatusOK, headers("X-RateLimit-Limit", "60", "X-RateLimit-Remaining", "60"), 0)
	g.Expect(p.batch()).To(Equal(60))
	p.shrink(60)
	g.Expect(p.batch()).To(Equal(30))
}

// TestPacerAnswersOutOfOrder: two batches in flight, the server charges
// them in one order and the answers arrive in the other. The estimate must
// not pay for a batch twice (it did: an import at its limit then waited
// 10 s for nothing).
func TestPacerAnswersOutOfOrder(t *testing.T) {
	g := NewWithT(t)
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	p := newPacer(100, func() time.Time { return now })
	ctx := context.Background()
	g.Expect(p.wait(ctx, 100)).To(Succeed())
	p.done(100, http.StatusOK, headers("X-RateLimit-Limit", "600", "X-RateLimit-Remaining", "500"), 0)

	g.Expect(p.wait(ctx, 100)).To(Succeed()) // A: the server charges it first, 400 left
	g.Expect(p.wait(ctx, 100)).To(Succeed()) // B: then this one, 300 left
	g.Expect(p.tokens).To(Equal(300.0))
	p.done(100, http.StatusOK, headers("X-RateLimit-Limit", "600", "X-RateLimit-Remaining", "300"), 0) // B's answer first
	g.Expect(p.tokens).To(Equal(300.0), "B's count already includes A")
	p.done(100, http.StatusOK, headers("X-RateLimit-Limit", "600", "X-RateLimit-Remaining", "400"), 0) // A's, older
	g.Expect(p.tokens).To(Equal(300.0), "an older, higher count does not raise it")
	g.Expect(delayOf(g, p, 300, now)).To(BeZero())

	// Another caller of the same ServiceAccount spent 250: the count lowers it.
	g.Expect(p.wait(ctx, 10)).To(Succeed())
	p.done(10, http.StatusOK, headers("X-RateLimit-Limit", "600", "X-RateLimit-Remaining", "40"), 0)
	g.Expect(p.tokens).To(Equal(40.0))
}

func TestPacerWithoutLimitHeaders(t *testing.T) {
	g := NewWithT(t)
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	p := newPacer(100, func() time.Time { return now })
	p.inflight = 1
	p.done(100, http.StatusOK, http.Header{}, 0)
	g.Expect(delayOf(g, p, 100, now)).To(Equal(time.Duration(0)), "no limit said: nothing to pace")
	p.inflight = 1
	p.done(100, http.StatusServiceUnavailable, http.Header{}, 3)
	g.Expect(delayOf(g, p, 100, now)).To(Equal(4*time.Second), "third failure without Retry-After: 1s, 2s, 4s")
}

func TestRetryAfter(t *testing.T) {
	g := NewWithT(t)
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for v, want := range map[string]time.Duration{
		"3":                             3 * time.Second,
		"Thu, 01 Jan 2026 00:00:12 GMT": 12 * time.Second,
		"Wed, 31 Dec 2025 23:59:00 GMT": 0,
	} {
		d, ok := retryAfter(headers("Retry-After", v), now)
		g.Expect(ok).To(BeTrue(), v)
		g.Expect(d).To(Equal(want), v)
	}
	for _, v := range []string{"", "soon", "-1"} {
		_, ok := retryAfter(headers("Retry-After", v), now)
		g.Expect(ok).To(BeFalse(), v)
	}
}

// TestETA: at the rate limit, the ETA is the limit's pace for what the
// bucket does not hold, however fast the start was.
func TestETA(t *testing.T) {
	g := NewWithT(t)
	p := &progress{total: 10000, start: time.Now().Add(-10 * time.Second)}
	p.pace = func() (int, float64, int) { return 600, 0, 0 }
	d, ok := p.eta(1000) // 1000 in 10s: 90s more at that pace
	g.Expect(ok).To(BeTrue())
	g.Expect(d).To(BeNumerically("~", 900*time.Second, time.Second), "9000 at 10 a second")
	p.pace = func() (int, float64, int) { return 600000, 600000, 0 }
	d, _ = p.eta(1000)
	g.Expect(d).To(BeNumerically("~", 90*time.Second, time.Second), "a raised limit: the observed pace")
	p.pace = func() (int, float64, int) { return 0, 0, 0 }
	_, ok = p.eta(0)
	g.Expect(ok).To(BeFalse(), "nothing tells yet")
}

// TestETAInFlight: at the limit, the batches in flight are already paid
// for: only the rest waits for the bucket, then the last answer takes a
// request's time. (The ETA counted the batch in flight again: at 600 a
// minute and two batches of 100 in flight, every ETA of an import
// measured with make bench-import was 6 s too long, 10 s of refill less
// the 4 s of a request.)
func TestETAInFlight(t *testing.T) {
	g := NewWithT(t)
	p := &progress{total: 1500, start: time.Now().Add(-50 * time.Second)}
	p.pace = func() (int, float64, int) { return 600, 0, 100 }
	p.latency = 2 * time.Second
	d, ok := p.eta(900)
	g.Expect(ok).To(BeTrue())
	g.Expect(d).To(BeNumerically("~", 52*time.Second, time.Second), "500 unsent at 10 a second, then one answer")
	p.pace = func() (int, float64, int) { return 600, 30, 100 }
	p.start = time.Now().Add(-10 * time.Second) // the pace so far says less
	d, _ = p.eta(1400)
	g.Expect(d).To(BeNumerically("~", 2*time.Second, 100*time.Millisecond), "all sent: the last answer only")
}

func TestOptionsValidate(t *testing.T) {
	optionstest.Validate(t, DefaultOptions, []optionstest.Case[Options]{
		{Name: "api", Edit: func(o *Options) { o.API, o.TokenFile = "https://kurz.example.com", "token" }},
		{Name: "api without token", Edit: func(o *Options) { o.API = "https://kurz.example.com" }, Error: "--token-file"},
		{Name: "api not a URL", Edit: func(o *Options) { o.API, o.TokenFile = "kurz.example.com", "t" }, Error: "--api"},
		{Name: "api with query", Edit: func(o *Options) { o.API, o.TokenFile = "https://k.example/?x=1", "t" }, Error: "--api"},
		{Name: "batch too large", Edit: func(o *Options) { o.BatchSize = 101 }, Error: "--batch-size"},
		{Name: "batch zero", Edit: func(o *Options) { o.BatchSize = 0 }, Error: "--batch-size"},
		{Name: "concurrency", Edit: func(o *Options) { o.Concurrency = 9 }, Error: "--concurrency"},
		{Name: "timeout", Edit: func(o *Options) { o.RequestTimeout = 0 }, Error: "--request-timeout"},
	})
}

func TestPlainHTTP(t *testing.T) {
	g := NewWithT(t)
	for api, want := range map[string]bool{
		"http://kurz.example.com":  true,
		"http://10.0.0.1:8080":     true,
		"https://kurz.example.com": false,
		"http://127.0.0.1:8080":    false,
		"http://[::1]:8080":        false,
		"http://localhost:8080":    false,
	} {
		g.Expect(plainHTTP(api)).To(Equal(want), api)
	}
}
