package clientip

import (
	"bytes"
	"fmt"
	"net"
	"net/netip"
	"strings"
)

// ipv6ClientBits is the prefix that identifies one IPv6 visitor: a /64 is
// usually one subscriber's network, and every address in it is theirs to use.
const ipv6ClientBits = 64

// ParseTrustedProxies parses a comma-separated list of CIDRs (a bare address
// is one host). Empty means none. An error names the entry; callers add
// their flag's name.
func ParseTrustedProxies(s string) ([]netip.Prefix, error) {
	var out []netip.Prefix
	for f := range strings.SplitSeq(s, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		p, err := netip.ParsePrefix(f)
		if err != nil {
			a, aerr := netip.ParseAddr(f)
			if aerr != nil {
				return nil, fmt.Errorf("%q is not a CIDR or an IP address", f)
			}
			a = a.Unmap()
			p = netip.PrefixFrom(a, a.BitLen())
		}
		if p.Addr().Is4In6() {
			p = netip.PrefixFrom(p.Addr().Unmap(), max(p.Bits()-96, 0))
		}
		out = append(out, p.Masked())
	}
	return out, nil
}

// Prefix returns the network that identifies the client for rate limits. Behind trusted proxies the TCP peer is a proxy, so the client is
// the right-most address of X-Forwarded-For that no trusted proxy added
// (addresses further left are the client's own claims and can be forged).
// IPv4 clients are one address, IPv6 clients their /64.
func Prefix(peer net.IP, xff [][]byte, trusted []netip.Prefix) netip.Prefix {
	client := Addr(peer, xff, trusted)
	if !client.IsValid() {
		return netip.Prefix{}
	}
	bits := client.BitLen()
	if client.Is6() {
		bits = ipv6ClientBits
	}
	p, _ := client.Prefix(bits) // bits fits the address family
	return p
}

// walkRight calls f on the X-Forwarded-For addresses from right to left (the
// last header first) while f returns true. A value that is not an address
// ends the walk: nothing to its left can be trusted either.
func walkRight(headers [][]byte, f func(netip.Addr) bool) {
	for i := len(headers) - 1; i >= 0; i-- {
		rest := headers[i]
		for len(rest) > 0 {
			var v []byte
			if j := bytes.LastIndexByte(rest, ','); j >= 0 {
				v, rest = rest[j+1:], rest[:j]
			} else {
				v, rest = rest, nil
			}
			v = bytes.TrimSpace(v)
			if len(v) == 0 {
				continue
			}
			a, ok := parseHop(string(v))
			if !ok || !f(a) {
				return
			}
		}
	}
}

// parseHop parses one X-Forwarded-For value: an address, possibly with a
// port (some proxies add one) or an IPv6 zone.
func parseHop(s string) (netip.Addr, bool) {
	a, err := netip.ParseAddr(s)
	if err != nil {
		ap, perr := netip.ParseAddrPort(s)
		if perr != nil {
			return netip.Addr{}, false
		}
		a = ap.Addr()
	}
	return a.WithZone("").Unmap(), true
}

func isTrusted(a netip.Addr, trusted []netip.Prefix) bool {
	for _, p := range trusted {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// Addr is the client's address, found as Prefix finds its network (the TCP
// peer, or behind trusted proxies the right-most address of X-Forwarded-For
// no trusted proxy added), unmapped; the zero Addr when peer is not an
// address. Click analytics hashes it (never stores it).
func Addr(peer net.IP, xff [][]byte, trusted []netip.Prefix) netip.Addr {
	client, ok := netip.AddrFromSlice(peer)
	if !ok {
		return netip.Addr{}
	}
	client = client.Unmap()
	if isTrusted(client, trusted) {
		walkRight(xff, func(a netip.Addr) bool {
			client = a
			return isTrusted(a, trusted)
		})
	}
	return client
}
