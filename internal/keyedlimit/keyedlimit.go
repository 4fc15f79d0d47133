// Package keyedlimit keeps a token bucket per key (a caller, a client
// address, a link) in a bounded cache. The API's rate limits and the
// redirect server's password attempts are both this: one implementation,
// so a fix to how buckets are created, forgotten or timed reaches both.
package keyedlimit

import (
	"math"
	"time"

	lru "github.com/hashicorp/golang-lru/v2"
	"golang.org/x/time/rate"
)

// Limiter holds one bucket of burst tokens per key, refilled at limit
// tokens a second. A key pushed out of the cache (the least recently used
// first) comes back with a full bucket, which only ever errs on the
// generous side.
type Limiter struct {
	limit   rate.Limit
	burst   int
	buckets *lru.Cache[string, *rate.Limiter]
}

// New returns a limiter of burst tokens a key refilled at limit a second,
// remembering at most keys keys. A burst or a size below 1 is a
// programming error.
func New(limit rate.Limit, burst, keys int) *Limiter {
	if burst < 1 {
		panic("keyedlimit: burst must be at least 1")
	}
	c, err := lru.New[string, *rate.Limiter](keys)
	if err != nil {
		panic(err) // only for a size below 1
	}
	return &Limiter{limit: limit, burst: burst, buckets: c}
}

// PerMinute returns a limiter of n a minute a key, bursts of n included.
func PerMinute(n, keys int) *Limiter {
	return New(rate.Limit(float64(n)/60), n, keys)
}

// Take takes n tokens from key's bucket, all or none. It reports whether
// they were taken, how many whole tokens remain, and, when refused, how
// long until n are there (more than a burst never are: the wait is then
// what n tokens take to refill, and the caller decides what to say).
func (l *Limiter) Take(key string, n int, now time.Time) (ok bool, remaining int, wait time.Duration) {
	b, found := l.buckets.Get(key)
	if !found {
		// Two first requests racing must share one bucket: the loser of
		// PeekOrAdd uses the winner's.
		b = rate.NewLimiter(l.limit, l.burst)
		if prev, found, _ := l.buckets.PeekOrAdd(key, b); found {
			b = prev
		}
	}
	if b.AllowN(now, n) {
		return true, int(math.Max(0, math.Floor(b.TokensAt(now)))), 0
	}
	missing := float64(n) - b.TokensAt(now)
	return false, 0, time.Duration(missing / float64(l.limit) * float64(time.Second))
}
