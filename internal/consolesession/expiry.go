package consolesession

import (
	"time"

	"github.com/kurz-dev/kurz/internal/jwtexp"
)

// Expiry is when a session signed in at now with token ends: the token's
// own expiry (a ServiceAccount token is a JWT with exp) or now+MaxAge,
// whichever comes first, in whole seconds. Call it only with a token the
// TokenReview accepted: the claim is read, not verified (the review did
// that). A token without exp (a legacy Secret-based token never expires)
// gets MaxAge.
func Expiry(token string, now time.Time) time.Time {
	limit := now.Add(MaxAge).Truncate(time.Second)
	if exp, ok := jwtexp.Of(token); ok && exp.Before(limit) {
		return exp
	}
	return limit
}
