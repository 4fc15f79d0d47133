package clientip

import (
	"net"
	"net/netip"
	"testing"

	. "github.com/onsi/gomega"
)

func TestClientPrefix(t *testing.T) {
	ingress, err := ParseTrustedProxies("10.0.0.0/8, 192.0.2.1,fd00::/8")
	NewWithT(t).Expect(err).NotTo(HaveOccurred())
	tests := []struct {
		name    string
		peer    string
		xff     []string
		trusted []netip.Prefix
		want    string
	}{
		{"no proxies: the peer", "198.51.100.9", nil, nil, "198.51.100.9/32"},
		{"no proxies: X-Forwarded-For ignored", "198.51.100.9", []string{"203.0.113.7"}, nil, "198.51.100.9/32"},
		{"untrusted peer: X-Forwarded-For ignored", "198.51.100.9", []string{"203.0.113.7"}, ingress, "198.51.100.9/32"},
		{"trusted peer: the client it names", "10.1.2.3", []string{"203.0.113.7"}, ingress, "203.0.113.7/32"},
		{"forged left part ignored", "10.1.2.3", []string{"1.1.1.1, 203.0.113.7"}, ingress, "203.0.113.7/32"},
		{"chain of trusted proxies", "10.1.2.3", []string{"1.1.1.1, 203.0.113.7, 192.0.2.1, 10.9.9.9"}, ingress, "203.0.113.7/32"},
		{"several headers: the last is right-most", "10.1.2.3", []string{"1.1.1.1", "203.0.113.7, 10.0.0.5"}, ingress, "203.0.113.7/32"},
		{"all trusted: the left-most", "10.1.2.3", []string{"10.0.0.7, 10.0.0.5"}, ingress, "10.0.0.7/32"},
		{"trusted peer without header: the peer", "10.1.2.3", nil, ingress, "10.1.2.3/32"},
		{"garbage ends the walk at the last hop", "10.1.2.3", []string{"203.0.113.7, nonsense, 10.0.0.5"}, ingress, "10.0.0.5/32"},
		{"port and spaces", "10.1.2.3", []string{" 203.0.113.7:4711 ,10.0.0.5"}, ingress, "203.0.113.7/32"},
		{"IPv6 client keyed by its /64", "10.1.2.3", []string{"2001:db8:1:2:aaaa::1"}, ingress, "2001:db8:1:2::/64"},
		{"IPv6 peer keyed by its /64", "2001:db8:1:2::99", nil, nil, "2001:db8:1:2::/64"},
		{"bracketed IPv6 with port", "fd00::1", []string{"[2001:db8::7]:443"}, ingress, "2001:db8::/64"},
		{"IPv4-mapped peer is IPv4", "::ffff:198.51.100.9", nil, nil, "198.51.100.9/32"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var xff [][]byte
			for _, h := range tt.xff {
				xff = append(xff, []byte(h))
			}
			g := NewWithT(t)
			g.Expect(Prefix(net.ParseIP(tt.peer), xff, tt.trusted).String()).To(Equal(tt.want))
			// Addr is the address itself, inside the prefix (an IPv6
			// client's whole address, not its /64).
			a := Addr(net.ParseIP(tt.peer), xff, tt.trusted)
			g.Expect(netip.MustParsePrefix(tt.want).Contains(a)).To(BeTrue(), a.String())
			g.Expect(a.Is4In6()).To(BeFalse())
		})
	}
}

func TestParseTrustedProxies(t *testing.T) {
	g := NewWithT(t)
	got, err := ParseTrustedProxies(" 10.0.0.0/8,,::ffff:192.0.2.1, fd00::/8 ")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(got).To(Equal([]netip.Prefix{
		netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("192.0.2.1/32"), netip.MustParsePrefix("fd00::/8"),
	}))
	_, err = ParseTrustedProxies("10.0.0.0/8,nonsense")
	g.Expect(err).To(MatchError(ContainSubstring(`"nonsense"`)))
	g.Expect(ParseTrustedProxies("")).To(BeEmpty())
}
