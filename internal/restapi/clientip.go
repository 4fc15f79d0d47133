package restapi

import (
	"net"
	"net/http"

	"github.com/kurz-dev/kurz/internal/clientip"
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
	return clientip.Prefix(net.ParseIP(host), xff, s.opts.TrustedProxies).String()
}
