package jwtexp

import (
	"encoding/base64"
	"testing"
	"time"
)

func jwt(payload string) string {
	enc := base64.RawURLEncoding.EncodeToString
	return enc([]byte(`{"alg":"RS256"}`)) + "." + enc([]byte(payload)) + ".c2ln"
}

func TestOf(t *testing.T) {
	for _, c := range []struct {
		name, token string
		want        time.Time
		ok          bool
	}{
		{"exp", jwt(`{"exp":1800000000}`), time.Unix(1800000000, 0), true},
		{"no exp", jwt(`{"sub":"x"}`), time.Time{}, false},
		{"zero exp", jwt(`{"exp":0}`), time.Time{}, false},
		{"fractional exp", jwt(`{"exp":1.5}`), time.Time{}, false},
		{"two parts", "a.b", time.Time{}, false},
		{"not base64", "a.!!!.c", time.Time{}, false},
		{"not JSON", "a." + base64.RawURLEncoding.EncodeToString([]byte("{")) + ".c", time.Time{}, false},
	} {
		got, ok := Of(c.token)
		if ok != c.ok || !got.Equal(c.want) {
			t.Errorf("%s: Of = %v, %v; want %v, %v", c.name, got, ok, c.want, c.ok)
		}
	}
}
