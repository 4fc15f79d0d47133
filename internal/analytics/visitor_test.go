package analytics

import (
	"net/netip"
	"testing"
	"time"
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
	for _, bad := range [][]byte{nil, make([]byte, MinSaltLen-1), make([]byte, MaxSaltLen+1)} {
		if _, err := NewVisitorHasher(bad); err == nil {
			t.Errorf("a %d-byte salt was accepted", len(bad))
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

func BenchmarkVisitorHash(b *testing.B) {
	h, _ := NewVisitorHasher(NewSalt())
	ip := netip.MustParseAddr("203.0.113.9")
	ua := []byte("Mozilla/5.0 (iPhone; CPU iPhone OS 17_6 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.6 Mobile/15E148 Safari/604.1")
	b.ReportAllocs()
	for b.Loop() {
		h.Hash(ip, ua)
	}
}
