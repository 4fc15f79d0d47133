package apiserver

import (
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strings"

	"github.com/kurz-dev/kurz/internal/redirect"
)

// clientKey names the client of r for the limit on unauthenticated
// requests: the TCP peer, or behind --api-trusted-proxies the right-most
// X-Forwarded-For address no trusted proxy added, as the redirect server
// does (IPv6 clients are their /64).
func (s *server) clientKey(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	var xff [][]byte
	if len(s.opts.TrustedProxies) > 0 {
		for _, v := range r.Header.Values("X-Forwarded-For") {
			xff = append(xff, []byte(v))
		}
	}
	return redirect.ClientPrefix(net.ParseIP(host), xff, s.opts.TrustedProxies).String()
}

// parseTrustedProxies parses --api-trusted-proxies: comma-separated CIDRs
// or addresses, with the redirect server's rules. Each entry is parsed on
// its own so that an error names this flag and the entry.
func parseTrustedProxies(s string) ([]netip.Prefix, error) {
	var out []netip.Prefix
	for f := range strings.SplitSeq(s, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		p, err := redirect.ParseTrustedProxies(f)
		if err != nil {
			return nil, fmt.Errorf("%q is not a CIDR or an IP address", f)
		}
		out = append(out, p...)
	}
	return out, nil
}
