// Package jwtexp reads when a JSON Web Token expires, without verifying
// it: callers first have kube-apiserver review the token (TokenReview),
// which verifies it, and then only need to know how long to keep it.
package jwtexp

import (
	"encoding/base64"
	"encoding/json"
	"strings"
	"time"
)

// Of returns the token's exp claim; false when the token is not a JWT or
// has no positive exp (a legacy Secret-based ServiceAccount token never
// expires).
func Of(token string) (time.Time, bool) {
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
