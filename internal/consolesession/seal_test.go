package consolesession

import (
	"encoding/base64"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func mustSealer(t *testing.T, secrets ...string) *Sealer {
	t.Helper()
	var b [][]byte
	for _, s := range secrets {
		b = append(b, []byte(s))
	}
	s, err := NewSealer(b...)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

const (
	keyA = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
	keyB = "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
)

func session(t *testing.T, now time.Time) Session {
	t.Helper()
	csrf, err := NewCSRF()
	if err != nil {
		t.Fatal(err)
	}
	return Session{Token: "head.payload.signature", Expires: now.Add(time.Hour).Truncate(time.Second), CSRF: csrf}
}

func TestSealOpen(t *testing.T) {
	now := time.Now()
	a := mustSealer(t, keyA)
	s := session(t, now)
	v, err := a.Seal(s)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(v, "payload") {
		t.Fatalf("the token shows through the sealed value %q", v)
	}
	got, err := mustSealer(t, keyA).Open(v, now) // another replica, same key
	if err != nil {
		t.Fatal(err)
	}
	if got.Token != s.Token || !got.Expires.Equal(s.Expires) || got.CSRF != s.CSRF {
		t.Fatalf("opened %+v, sealed %+v", got, s)
	}
	if _, err := a.Open(v, s.Expires); err != ErrInvalid {
		t.Fatalf("open at expiry: %v, want ErrInvalid", err)
	}
	if _, err := mustSealer(t, keyB).Open(v, now); err != ErrInvalid {
		t.Fatalf("open under another key: %v, want ErrInvalid", err)
	}
	raw, _ := base64.RawURLEncoding.DecodeString(v)
	for i := range raw {
		changed := append([]byte(nil), raw...)
		changed[i] ^= 1
		if _, err := a.Open(base64.RawURLEncoding.EncodeToString(changed), now); err != ErrInvalid {
			t.Fatalf("byte %d changed: %v, want ErrInvalid", i, err)
		}
	}
	for _, bad := range []string{"", "!", v[:len(v)-1], v[:20]} {
		if _, err := a.Open(bad, now); err != ErrInvalid {
			t.Fatalf("open %q: %v, want ErrInvalid", bad, err)
		}
	}
}

func TestRotation(t *testing.T) {
	now := time.Now()
	old, err := mustSealer(t, keyA).Seal(session(t, now))
	if err != nil {
		t.Fatal(err)
	}
	rotated := mustSealer(t, keyB, keyA)
	if _, err := rotated.Open(old, now); err != nil {
		t.Fatalf("the previous key no longer opens: %v", err)
	}
	fresh, _ := rotated.Seal(session(t, now))
	if _, err := mustSealer(t, keyB).Open(fresh, now); err != nil {
		t.Fatalf("the first key did not seal: %v", err)
	}
}

func TestCSRFMatches(t *testing.T) {
	c, _ := NewCSRF()
	if !CSRFMatches(c, c) || CSRFMatches("", c) || CSRFMatches(c[1:], c) || CSRFMatches(c+"x", c) {
		t.Fatal("CSRFMatches is wrong")
	}
}

func jwtWith(t *testing.T, claims map[string]any) string {
	t.Helper()
	b, _ := json.Marshal(claims)
	return "eyJhbGciOiJSUzI1NiJ9." + base64.RawURLEncoding.EncodeToString(b) + ".c2ln"
}

func TestExpiry(t *testing.T) {
	now := time.Unix(1_800_000_000, 500)
	soon := now.Add(time.Hour).Unix()
	if got := Expiry(jwtWith(t, map[string]any{"exp": soon}), now); got.Unix() != soon {
		t.Fatalf("a token expiring in 1 h: session until %v, want %v", got, time.Unix(soon, 0))
	}
	capAt := now.Add(MaxAge).Truncate(time.Second)
	for name, tok := range map[string]string{
		"a day":  jwtWith(t, map[string]any{"exp": now.Add(24 * time.Hour).Unix()}),
		"no exp": jwtWith(t, map[string]any{"sub": "x"}),
		"junk":   "a.b.c",
	} {
		if got := Expiry(tok, now); !got.Equal(capAt) {
			t.Fatalf("%s: session until %v, want the cap %v", name, got, capAt)
		}
	}
}

func TestKeyFile(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "key")
	if _, err := LoadKeyFile(p); err == nil || !strings.Contains(err.Error(), "--console-session-key-file") {
		t.Fatalf("missing file: %v", err)
	}
	_ = os.WriteFile(p, []byte("short\n"), 0o600)
	if _, err := LoadKeyFile(p); err == nil || !strings.Contains(err.Error(), "at least 32") {
		t.Fatalf("short key: %v", err)
	}
	_ = os.WriteFile(p, []byte("\n\n"), 0o600)
	if _, err := LoadKeyFile(p); err == nil || !strings.Contains(err.Error(), "no key") {
		t.Fatalf("empty file: %v", err)
	}
	_ = os.Remove(p)
	if err := WriteKeyFile(p); err != nil {
		t.Fatal(err)
	}
	first, _ := os.ReadFile(p)
	if err := WriteKeyFile(p); err != nil {
		t.Fatal(err)
	}
	second, _ := os.ReadFile(p)
	if string(first) != string(second) {
		t.Fatal("WriteKeyFile replaced an existing key")
	}
	if st, _ := os.Stat(p); st.Mode().Perm() != 0o600 {
		t.Fatalf("key file mode %v", st.Mode().Perm())
	}
	a, err := LoadKeyFile(p)
	if err != nil {
		t.Fatal(err)
	}
	v, _ := a.Seal(session(t, time.Now()))
	b, _ := LoadKeyFile(p)
	if _, err := b.Open(v, time.Now()); err != nil {
		t.Fatalf("one key file, two sealers: %v", err)
	}
}
