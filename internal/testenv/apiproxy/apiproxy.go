// Package apiproxy puts a plain-HTTP proxy in front of a suite's envtest
// kube-apiserver that can cut it off, or freeze it as SIGSTOP does, for the
// fault tests of the click pipeline (internal/redirect/clicks, and the
// redirect server's end-to-end tests): one proxy for both suites. It is
// imported by tests only.
package apiproxy

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"sync"
	"testing"

	"github.com/onsi/gomega"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kurzv1alpha1 "github.com/kurz-dev/kurz/api/v1alpha1"
	"github.com/kurz-dev/kurz/internal/scheme"
)

// Proxy is a plain-HTTP proxy in front of the envtest API server (it
// authenticates as the suite's admin). It can freeze the API server as
// SIGSTOP does: in Hold mode it takes PATCH requests and answers nothing
// until the client gives up; Release then delivers them, so the API server
// applies a patch whose sender long stopped waiting. In Down mode every
// request fails (the connection is closed). In CommitThen503 mode the
// next PATCH is forwarded and applied, but its sender is told 503 with
// Retry-After (as an overloaded API server or a proxy may answer after
// the work is done); client-go then sends it again. The mode ends with
// that PATCH.
type Proxy struct {
	srv       *httptest.Server
	target    *url.URL
	transport http.RoundTripper
	rp        *httputil.ReverseProxy

	mu     sync.Mutex
	mode   Mode
	parked []parkedRequest
	// swallowed are the API server's answers to the patches CommitThen503
	// mode answered 503 instead.
	swallowed []int
}

// Mode is what the proxy does with the requests it gets.
type Mode int

const (
	// Pass forwards every request.
	Pass Mode = iota
	// Hold parks PATCH requests unanswered (see Release); others pass.
	Hold
	// Down closes every connection.
	Down
	// CommitThen503 forwards the next PATCH and answers it 503.
	CommitThen503
)

type parkedRequest struct {
	method, uri string
	header      http.Header
	body        []byte
}

// New starts a proxy in front of the API server of cfg, closed when t ends.
func New(t testing.TB, cfg *rest.Config) *Proxy {
	t.Helper()
	g := gomega.NewWithT(t)
	target, err := url.Parse(cfg.Host)
	g.Expect(err).NotTo(gomega.HaveOccurred())
	transport, err := rest.TransportFor(cfg)
	g.Expect(err).NotTo(gomega.HaveOccurred())
	p := &Proxy{target: target, transport: transport}
	p.rp = &httputil.ReverseProxy{
		Rewrite:       func(r *httputil.ProxyRequest) { r.SetURL(target) },
		Transport:     transport,
		FlushInterval: -1, // watches stream
	}
	p.srv = httptest.NewServer(p)
	t.Cleanup(p.srv.Close)
	return p
}

// Config is a client configuration through the proxy.
func (p *Proxy) Config() *rest.Config {
	return &rest.Config{Host: p.srv.URL, QPS: -1}
}

// Client is a client through the proxy, on kurz's scheme. It learns the
// REST mapping of kurz's kinds now, so that a later outage fails its
// requests at once, as it does a running manager's (that learned it when
// it started), rather than its discovery after retries.
func (p *Proxy) Client(t testing.TB) client.Client {
	t.Helper()
	g := gomega.NewWithT(t)
	c, err := client.New(p.Config(), client.Options{Scheme: scheme.Scheme})
	g.Expect(err).NotTo(gomega.HaveOccurred())
	_, err = c.RESTMapper().RESTMapping(kurzv1alpha1.GroupVersion.WithKind("Link").GroupKind())
	g.Expect(err).NotTo(gomega.HaveOccurred())
	return c
}

// SetMode changes what the proxy does with the requests that follow.
func (p *Proxy) SetMode(m Mode) {
	p.mu.Lock()
	p.mode = m
	p.mu.Unlock()
}

// Release delivers the parked requests in order, and returns their
// answers' status codes (nil when none is parked).
func (p *Proxy) Release(t testing.TB) []int {
	t.Helper()
	p.mu.Lock()
	parked := p.parked
	p.parked = nil
	p.mu.Unlock()
	if len(parked) == 0 {
		return nil
	}
	codes := make([]int, 0, len(parked))
	for _, r := range parked {
		req, err := http.NewRequest(r.method, p.target.Scheme+"://"+p.target.Host+r.uri, bytes.NewReader(r.body))
		gomega.NewWithT(t).Expect(err).NotTo(gomega.HaveOccurred())
		req.Header = r.header
		resp, err := p.transport.RoundTrip(req)
		gomega.NewWithT(t).Expect(err).NotTo(gomega.HaveOccurred())
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		codes = append(codes, resp.StatusCode)
	}
	return codes
}

// Swallowed returns the API server's answers CommitThen503 mode kept from
// the client.
func (p *Proxy) Swallowed() []int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]int(nil), p.swallowed...)
}

// Parked is the number of requests Hold mode holds.
func (p *Proxy) Parked() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.parked)
}

func (p *Proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p.mu.Lock()
	mode := p.mode
	p.mu.Unlock()
	switch {
	case mode == Down:
		conn, _, err := w.(http.Hijacker).Hijack()
		if err == nil {
			conn.Close()
		}
	case mode == CommitThen503 && r.Method == http.MethodPatch:
		rec := httptest.NewRecorder()
		p.rp.ServeHTTP(rec, r)
		p.mu.Lock()
		p.swallowed = append(p.swallowed, rec.Code)
		p.mode = Pass
		p.mu.Unlock()
		w.Header().Set("Retry-After", "0")
		http.Error(w, "injected after the API server answered", http.StatusServiceUnavailable)
	case mode == Hold && r.Method == http.MethodPatch:
		body, err := io.ReadAll(r.Body)
		if err != nil {
			return
		}
		p.mu.Lock()
		p.parked = append(p.parked, parkedRequest{method: r.Method, uri: r.URL.RequestURI(), header: r.Header.Clone(), body: body})
		p.mu.Unlock()
		// Like a frozen server: no answer; the client times out.
		<-r.Context().Done()
	default:
		p.rp.ServeHTTP(w, r)
	}
}
