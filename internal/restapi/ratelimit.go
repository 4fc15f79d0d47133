package restapi

import (
	"math"
	"sync"
	"time"

	lru "github.com/hashicorp/golang-lru/v2"
	"golang.org/x/time/rate"
)

// limiterCacheSize bounds how many keys (callers, or client addresses) have
// a bucket. A key pushed out comes back with a full bucket, which only ever
// errs on the generous side.
const limiterCacheSize = 10000

// rateLimiter allows each key perMinute requests a minute: a token bucket
// of that size refilled continuously, so bursts up to the limit are fine.
type rateLimiter struct {
	perMinute int
	mu        sync.Mutex // makes get-or-create atomic
	buckets   *lru.Cache[string, *rate.Limiter]
}

func newRateLimiter(perMinute int) *rateLimiter {
	if perMinute <= 0 {
		return &rateLimiter{}
	}
	c, err := lru.New[string, *rate.Limiter](limiterCacheSize)
	if err != nil {
		panic(err) // only for a size below 1
	}
	return &rateLimiter{perMinute: perMinute, buckets: c}
}

func (l *rateLimiter) enabled() bool { return l.perMinute > 0 }

// allow takes n requests from key's bucket (n items of a bulk request
// count as n), all or none. It returns whether the request may go on, how
// many remain, and, when refused, how long until n are allowed.
func (l *rateLimiter) allow(key string, n int, now time.Time) (ok bool, remaining int, retryAfter time.Duration) {
	l.mu.Lock()
	b, found := l.buckets.Get(key)
	if !found {
		b = rate.NewLimiter(rate.Limit(float64(l.perMinute)/60), l.perMinute)
		l.buckets.Add(key, b)
	}
	l.mu.Unlock()

	if b.AllowN(now, n) {
		return true, int(math.Max(0, math.Floor(b.TokensAt(now)))), 0
	}
	missing := float64(n) - b.TokensAt(now)
	wait := time.Duration(missing / float64(b.Limit()) * float64(time.Second))
	return false, 0, wait
}
