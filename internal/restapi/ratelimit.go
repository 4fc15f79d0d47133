package restapi

import "github.com/kurz-dev/kurz/internal/keyedlimit"

// limiterCacheSize bounds how many keys (callers, or client addresses) have
// a bucket; a key pushed out comes back with a full bucket.
const limiterCacheSize = 10000

// newRateLimiter returns a limiter of perMinute requests a minute per key
// (bursts up to the limit are fine), or nil, no limit, for 0.
func newRateLimiter(perMinute int) *keyedlimit.Limiter {
	if perMinute <= 0 {
		return nil
	}
	return keyedlimit.PerMinute(perMinute, limiterCacheSize)
}
