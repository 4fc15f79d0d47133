package analytics

import (
	"bytes"
	"encoding/binary"
	"net/netip"
	"testing"
	"time"

	"golang.org/x/crypto/blake2b"

	"github.com/kurz-dev/kurz/internal/analytics/siphash"
)

func TestVisitorHash(t *testing.T) {
	s1, s2 := NewSalt(), NewSalt()
	h1, err := NewVisitorHasher(s1)
	if err != nil {
		t.Fatal(err)
	}
	h1b, _ := NewVisitorHasher(s1)
	h2, _ := NewVisitorHasher(s2)
	ip := netip.MustParseAddr("192.0.2.7")
	ua := []byte("Mozilla/5.0")
	a := h1.Hash(ip, ua)
	if a == 0 || a != h1.Hash(ip, ua) || a != h1b.Hash(ip, ua) {
		t.Fatalf("the same salt, IP and UA must give the same non-zero hash")
	}
	for name, other := range map[string]uint64{
		"another salt": h2.Hash(ip, ua),
		"another IP":   h1.Hash(netip.MustParseAddr("192.0.2.8"), ua),
		"another UA":   h1.Hash(ip, []byte("Mozilla/5.1")),
		"IPv6":         h1.Hash(netip.MustParseAddr("2001:db8::7"), ua),
	} {
		if other == a {
			t.Errorf("%s gives the same hash", name)
		}
	}
	// IPv4 and its IPv4-mapped IPv6 form are one client.
	if h1.Hash(netip.MustParseAddr("::ffff:192.0.2.7"), ua) != a {
		t.Errorf("IPv4-mapped address hashes differently")
	}
	if n := testing.AllocsPerRun(100, func() { h1.Hash(ip, ua) }); n != 0 {
		t.Errorf("Hash allocates %v times", n)
	}
}

// A salt names its algorithm: a SipHash salt hashes with SipHash-2-4 under
// its key, a raw one (made before SipHash) with keyed BLAKE2b-64 as before,
// so a day's values are the same on every version; anything else is refused.
func TestSaltKinds(t *testing.T) {
	ip := netip.MustParseAddr("192.0.2.7")
	ip16 := ip.As16()
	ua := []byte("Mozilla/5.0 (X11; Linux x86_64)")

	var key [siphash.KeySize]byte
	for i := range key {
		key[i] = byte(i)
	}
	sip := SipHashSalt(key)
	if got, want := string(sip), SipHashSaltPrefix+"000102030405060708090a0b0c0d0e0f"; got != want {
		t.Fatalf("SipHash salt %q, want %q", got, want)
	}
	if len(sip) <= MaxBLAKE2bSaltLen {
		t.Fatalf("a SipHash salt of %d bytes would be a BLAKE2b key to kurz before SipHash", len(sip))
	}
	h, err := NewVisitorHasher(sip)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := h.Hash(ip, ua), siphash.KeyFrom(key).Sum64(append(ip16[:], ua...)); got != want {
		t.Errorf("SipHash salt: %#x, want SipHash-2-4 %#x", got, want)
	}
	if KindOf(NewSalt()) != SaltSipHash {
		t.Errorf("NewSalt makes %v salts", KindOf(NewSalt()))
	}

	legacy := bytes.Repeat([]byte{0xa5}, 32) // what NewSalt made before SipHash
	h, err = NewVisitorHasher(legacy)
	if err != nil {
		t.Fatal(err)
	}
	b2, _ := blake2b.New(8, legacy)
	b2.Write(ip16[:])
	b2.Write(ua)
	if got, want := h.Hash(ip, ua), binary.LittleEndian.Uint64(b2.Sum(nil)); got != want {
		t.Errorf("BLAKE2b salt: %#x, want keyed BLAKE2b-64 %#x", got, want)
	}
	if n := testing.AllocsPerRun(100, func() { h.Hash(ip, ua) }); n != 0 {
		t.Errorf("BLAKE2b Hash allocates %v times", n)
	}

	for name, c := range map[string]struct {
		salt []byte
		kind SaltKind
	}{
		"16 raw bytes":         {make([]byte, 16), SaltBLAKE2b},
		"64 raw bytes":         {make([]byte, 64), SaltBLAKE2b},
		"newer version":        {[]byte(SaltVersionPrefix + "v3 something-else key=00"), SaltNewer},
		"empty":                {nil, SaltInvalid},
		"15 raw bytes":         {make([]byte, 15), SaltInvalid},
		"65 raw bytes":         {make([]byte, 65), SaltInvalid},
		"SipHash, short key":   {sip[:len(sip)-2], SaltInvalid},
		"SipHash, long key":    {append(bytes.Clone(sip), '0', '0'), SaltInvalid},
		"SipHash, not hex key": {append(bytes.Clone(sip[:len(sip)-1]), 'g'), SaltInvalid},
	} {
		if got := KindOf(c.salt); got != c.kind {
			t.Errorf("%s: kind %v, want %v", name, got, c.kind)
		}
		if _, err := NewVisitorHasher(c.salt); (err == nil) != c.kind.Usable() {
			t.Errorf("%s: NewVisitorHasher error %v, usable %v", name, err, c.kind.Usable())
		}
	}
}

func TestVisitorsPickTheClicksDay(t *testing.T) {
	day := time.Date(2025, 5, 1, 0, 0, 0, 0, time.UTC)
	s1, s2 := NewSalt(), NewSalt()
	v, err := NewVisitors(DaySalt{Day: day, Salt: s1}, DaySalt{Day: day.AddDate(0, 0, 1), Salt: s2})
	if err != nil {
		t.Fatal(err)
	}
	h1, _ := NewVisitorHasher(s1)
	h2, _ := NewVisitorHasher(s2)
	ip, ua := netip.MustParseAddr("198.51.100.1"), []byte("x")
	if got := v.Hash(day.Add(24*time.Hour-time.Second), ip, ua); got != h1.Hash(ip, ua) {
		t.Errorf("23:59:59 was not hashed with its day's salt")
	}
	if got := v.Hash(day.Add(24*time.Hour), ip, ua); got != h2.Hash(ip, ua) {
		t.Errorf("midnight was not hashed with the next day's salt")
	}
	if got := v.Hash(day.AddDate(0, 0, 2), ip, ua); got != 0 {
		t.Errorf("a day without a salt gave %d, want 0 (unknown)", got)
	}
	if n := testing.AllocsPerRun(100, func() { v.Hash(day, ip, ua) }); n != 0 {
		t.Errorf("Visitors.Hash allocates %v times", n)
	}
}

// go test -run '^$' -bench VisitorHash ./internal/analytics/
func BenchmarkVisitorHash(b *testing.B) {
	ip := netip.MustParseAddr("203.0.113.9")
	ua := []byte("Mozilla/5.0 (iPhone; CPU iPhone OS 17_6 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.6 Mobile/15E148 Safari/604.1")
	for name, salt := range map[string][]byte{"siphash": NewSalt(), "blake2b": bytes.Repeat([]byte{1}, 32)} {
		b.Run(name, func(b *testing.B) {
			h, _ := NewVisitorHasher(salt)
			b.ReportAllocs()
			for b.Loop() {
				h.Hash(ip, ua)
			}
		})
	}
}
