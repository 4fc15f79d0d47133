package redirect

import (
	"net"
	"net/netip"
)

// ClientPrefix exposes clientPrefix to the API server, whose limit on
// unauthenticated requests identifies clients the same way (trusted proxies,
// X-Forwarded-For, IPv6 /64s). It lives in its own file so that clientip.go
// can change without touching the API; should a third user appear, move the
// pure logic of clientip.go to a small package of its own instead.
func ClientPrefix(peer net.IP, xff [][]byte, trusted []netip.Prefix) netip.Prefix {
	return clientPrefix(peer, xff, trusted)
}
