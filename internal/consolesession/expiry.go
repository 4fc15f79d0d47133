package consolesession

import (
	"encoding/base64"
	"encoding/json"
	"strings"
	"time"
)

// Expiry is when a session signed in at now with token ends: the token's
// own expiry (a ServiceAccount token is a JWT with exp) or now+MaxAge,
// whichever comes first, in whole seconds. Call it only with a token the
// TokenReview accepted: the claim is read, not verified (the review did
// that). A token without exp (a legacy Secret-based token never expires)
// gets MaxAge.
func Expiry(token string, now time.Time) time.Time {
	limit := now.Add(MaxAge).Truncate(time.Second)
	if exp, ok := tokenExpiry(token); ok && exp.Before(limit) {
		return exp
	}
	return limit
}

// tokenExpiry reads the exp claim of a JWT.
func tokenExpiry(token string) (time.Time, bool) {
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		return time.Time{}, false
	}
	payload, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		return time.Time{}, false
	}
	var claims struct {
		Exp *json.Number `json:"exp"`
	}
	if err := json.Unmarshal(payload, &claims); err != nil || claims.Exp == nil {
		return time.Time{}, false
	}
	exp, err := claims.Exp.Int64()
	if err != nil || exp <= 0 {
		return time.Time{}, false
	}
	return time.Unix(exp, 0), true
}
