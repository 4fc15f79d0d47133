package webhooks

import (
	"crypto/tls"
	"crypto/x509"
	"net"
	"net/http"
	"net/netip"
	"syscall"
	"time"
)

// newDialer returns the dialer of one Webhook's connections. Its Control
// runs for every address the dialer is about to connect to, after DNS
// resolution: the address checked is the address connected to, so a name
// that resolves to a public address when checked and to 169.254.169.254
// when used (DNS rebinding) is refused all the same.
func newDialer(p addressPolicy, resolver *net.Resolver, timeout time.Duration) *net.Dialer {
	return &net.Dialer{
		Timeout:   timeout,
		KeepAlive: 30 * time.Second,
		Resolver:  resolver,
		Control: func(_, address string, _ syscall.RawConn) error {
			ap, err := netip.ParseAddrPort(address)
			if err != nil {
				return &RefusedError{Kind: "unparsable"}
			}
			return p.check(ap.Addr())
		},
	}
}

// responseHeaderLimit bounds the answer's headers; the body is read up to
// bodyLimit. A receiver's answer is only its status to kurz.
const (
	responseHeaderLimit = 16 << 10
	bodyLimit           = 4 << 10
	// writeBufferSize is a connection's write buffer: a request's
	// headers (up to 4 KiB: a URL of 2048 bytes, the signatures) and a
	// full link.clicked body (maxBatchBytes).
	writeBufferSize = maxBatchBytes + 4<<10
)

// newClient returns the HTTP client of one Webhook: its own transport (so
// its connections, and a receiver holding them, concern no other Webhook),
// TLS verified against roots, no proxy from the environment (a proxy would
// be the address checked, not the receiver), no redirects followed (a 3xx
// is a failed attempt: the receiver should be updated instead, and a
// redirect could lead anywhere).
func newClient(p addressPolicy, resolver *net.Resolver, roots *x509.CertPool, timeout time.Duration) *http.Client {
	d := newDialer(p, resolver, timeout)
	tr := &http.Transport{
		Proxy:                  nil,
		DialContext:            d.DialContext,
		TLSClientConfig:        &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12},
		TLSHandshakeTimeout:    timeout,
		ResponseHeaderTimeout:  timeout,
		MaxResponseHeaderBytes: responseHeaderLimit,
		// A request with a full link.clicked batch (up to 96 KiB) leaves
		// in one TLS write of full records, not in the 4 KiB pieces of
		// the default buffer (a record, its seal and a syscall each).
		WriteBufferSize:     writeBufferSize,
		MaxIdleConns:        2,
		MaxIdleConnsPerHost: 2,
		IdleConnTimeout:     90 * time.Second,
		ForceAttemptHTTP2:   true,
		DisableCompression:  true,
	}
	return &http.Client{
		Transport:     tr,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}
