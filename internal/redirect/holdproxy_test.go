package redirect

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"sync"
	"testing"

	. "github.com/onsi/gomega"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// holdProxy is a plain-HTTP proxy in front of the envtest API server (it
// authenticates as the suite's admin). It can freeze the API server as
// SIGSTOP does: in hold mode it takes PATCH requests and answers nothing
// until the client gives up; release then delivers them, so the API server
// applies a patch whose sender long stopped waiting. In down mode every
// request fails (the connection is closed). In commit-then-503 mode the
// next PATCH is forwarded and applied, but its sender is told 503 with
// Retry-After (as an overloaded API server or a proxy may answer after
// the work is done); client-go then sends it again. The mode ends with
// that PATCH.
type holdProxy struct {
	srv       *httptest.Server
	target    *url.URL
	transport http.RoundTripper
	rp        *httputil.ReverseProxy

	mu     sync.Mutex
	mode   proxyMode
	parked []parkedRequest
	// swallowed are the API server's answers to the patches commit-then-503
	// mode answered 503 instead.
	swallowed []int
}

type proxyMode int

const (
	proxyPass proxyMode = iota
	proxyHold
	proxyDown
	proxyCommitThen503
)

type parkedRequest struct {
	method, uri string
	header      http.Header
	body        []byte
}

func newHoldProxy(t *testing.T) *holdProxy {
	t.Helper()
	g := NewWithT(t)
	target, err := url.Parse(cfg.Host)
	g.Expect(err).NotTo(HaveOccurred())
	transport, err := rest.TransportFor(cfg)
	g.Expect(err).NotTo(HaveOccurred())
	p := &holdProxy{target: target, transport: transport}
	p.rp = &httputil.ReverseProxy{
		Rewrite:       func(r *httputil.ProxyRequest) { r.SetURL(target) },
		Transport:     transport,
		FlushInterval: -1, // watches stream
	}
	p.srv = httptest.NewServer(p)
	t.Cleanup(p.srv.Close)
	return p
}

// config is a client configuration through the proxy.
func (p *holdProxy) config() *rest.Config {
	return &rest.Config{Host: p.srv.URL, QPS: -1}
}

func (p *holdProxy) client(t *testing.T) client.Client {
	t.Helper()
	c, err := client.New(p.config(), client.Options{Scheme: scheme})
	NewWithT(t).Expect(err).NotTo(HaveOccurred())
	return c
}

func (p *holdProxy) setMode(m proxyMode) {
	p.mu.Lock()
	p.mode = m
	p.mu.Unlock()
}

// release delivers the parked requests in order, and returns their
// answers' status codes.
func (p *holdProxy) release(t *testing.T) []int {
	t.Helper()
	p.mu.Lock()
	parked := p.parked
	p.parked = nil
	p.mu.Unlock()
	var codes []int
	for _, r := range parked {
		req, err := http.NewRequest(r.method, p.target.Scheme+"://"+p.target.Host+r.uri, bytes.NewReader(r.body))
		NewWithT(t).Expect(err).NotTo(HaveOccurred())
		req.Header = r.header
		resp, err := p.transport.RoundTrip(req)
		NewWithT(t).Expect(err).NotTo(HaveOccurred())
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		codes = append(codes, resp.StatusCode)
	}
	return codes
}

// swallowedCodes returns the API server's answers commit-then-503 mode
// kept from the client.
func (p *holdProxy) swallowedCodes() []int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]int(nil), p.swallowed...)
}

func (p *holdProxy) parkedCount() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.parked)
}

func (p *holdProxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p.mu.Lock()
	mode := p.mode
	p.mu.Unlock()
	switch {
	case mode == proxyDown:
		conn, _, err := w.(http.Hijacker).Hijack()
		if err == nil {
			conn.Close()
		}
	case mode == proxyCommitThen503 && r.Method == http.MethodPatch:
		rec := httptest.NewRecorder()
		p.rp.ServeHTTP(rec, r)
		p.mu.Lock()
		p.swallowed = append(p.swallowed, rec.Code)
		p.mode = proxyPass
		p.mu.Unlock()
		w.Header().Set("Retry-After", "0")
		http.Error(w, "injected after the API server answered", http.StatusServiceUnavailable)
	case mode == proxyHold && r.Method == http.MethodPatch:
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
