//go:build linux

package connpark

import (
	"bufio"
	"context"
	"encoding/hex"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"github.com/valyala/fasthttp"
)

// testServer serves echo (the request path as the body) through connpark
// with the redirect listener's buffer settings.
type testServer struct {
	*Server
	addr   string
	served chan error
}

func startServer(t *testing.T, o Options, handler func(*fasthttp.RequestCtx)) *testServer {
	t.Helper()
	return startFastHTTP(t, o, &fasthttp.Server{Handler: handler})
}

// startSlowServer is startServer whose answer to /slow waits: entered is
// closed when it starts, and it goes on once release is closed.
func startSlowServer(t *testing.T) (ts *testServer, entered, release chan struct{}) {
	t.Helper()
	entered, release = make(chan struct{}), make(chan struct{})
	ts = startServer(t, Options{}, func(ctx *fasthttp.RequestCtx) {
		if string(ctx.Path()) == "/slow" {
			close(entered)
			<-release
		}
		ctx.SetBodyString(string(ctx.Path()))
	})
	return ts, entered, release
}

// startFastHTTP serves srv through connpark, with the redirect listener's
// buffer settings and its timeouts where srv sets none.
func startFastHTTP(t *testing.T, o Options, srv *fasthttp.Server) *testServer {
	t.Helper()
	g := NewWithT(t)
	if srv.Handler == nil {
		srv.Handler = func(ctx *fasthttp.RequestCtx) { ctx.SetBodyString(string(ctx.Path())) }
	}
	if srv.ReadTimeout == 0 {
		srv.ReadTimeout = 10 * time.Second
	}
	if srv.WriteTimeout == 0 {
		srv.WriteTimeout = 10 * time.Second
	}
	if srv.IdleTimeout == 0 {
		srv.IdleTimeout = 90 * time.Second
	}
	srv.ReadBufferSize = 32 << 10
	srv.ReduceMemoryUsage = true
	if o.ReadTimeout == 0 {
		o.ReadTimeout = srv.ReadTimeout
	}
	if o.IdleTimeout == 0 {
		o.IdleTimeout = srv.IdleTimeout
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	g.Expect(err).NotTo(HaveOccurred())
	s, err := New(srv, o)
	g.Expect(err).NotTo(HaveOccurred())
	ts := &testServer{Server: s, addr: ln.Addr().String(), served: make(chan error, 1)}
	go func() { ts.served <- s.Serve(ln) }()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		g.Expect(s.Shutdown(ctx)).To(Succeed())
		g.Expect(<-ts.served).To(Succeed())
	})
	return ts
}

// client is one keep-alive TCP connection.
type client struct {
	net.Conn
	br *bufio.Reader
}

func dial(t *testing.T, local, addr string) *client {
	t.Helper()
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(local)}, Timeout: 30 * time.Second} // generous: a busy machine accepts slowly
	c, err := d.DialContext(context.Background(), "tcp", addr)
	NewWithT(t).Expect(err).NotTo(HaveOccurred())
	t.Cleanup(func() { c.Close() })
	return &client{Conn: c, br: bufio.NewReader(c)}
}

func request(path string, headers ...string) string {
	return "GET " + path + " HTTP/1.1\r\nHost: park.test\r\n" + strings.Join(headers, "") + "\r\n"
}

func (c *client) send(t *testing.T, raw string) {
	t.Helper()
	g := NewWithT(t)
	g.Expect(c.SetDeadline(time.Now().Add(10 * time.Second))).To(Succeed())
	_, err := io.WriteString(c, raw)
	g.Expect(err).NotTo(HaveOccurred())
}

// answer reads one response: its status and body.
func (c *client) answer(t *testing.T) (int, string) {
	t.Helper()
	g := NewWithT(t)
	g.Expect(c.SetDeadline(time.Now().Add(10 * time.Second))).To(Succeed())
	resp, err := http.ReadResponse(c.br, nil)
	g.Expect(err).NotTo(HaveOccurred())
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	g.Expect(err).NotTo(HaveOccurred())
	return resp.StatusCode, string(b)
}

func (c *client) get(t *testing.T, path string) (int, string) {
	t.Helper()
	c.send(t, request(path))
	return c.answer(t)
}

// closedByServer reports whether the server closed the connection: a read
// ends with EOF (or a reset) before the deadline.
func (c *client) closedByServer(t *testing.T) bool {
	t.Helper()
	NewWithT(t).Expect(c.SetReadDeadline(time.Now().Add(30 * time.Second))).To(Succeed())
	_, err := c.br.ReadByte()
	return err == io.EOF || err != nil && strings.Contains(err.Error(), "reset by peer")
}

// unread returns the bytes waiting in the receive queue of the server's end
// of c, from /proc/net/tcp: 0 once the server has read all c sent.
func (c *client) unread(t *testing.T) int {
	t.Helper()
	g := NewWithT(t)
	b, err := os.ReadFile("/proc/net/tcp")
	g.Expect(err).NotTo(HaveOccurred())
	local := procAddr(t, c.RemoteAddr()) // the server's end
	remote := procAddr(t, c.LocalAddr())
	for line := range strings.Lines(string(b)) {
		f := strings.Fields(line)
		if len(f) > 4 && f[1] == local && f[2] == remote {
			_, rx, _ := strings.Cut(f[4], ":")
			n, err := strconv.ParseUint(rx, 16, 32)
			g.Expect(err).NotTo(HaveOccurred())
			return int(n)
		}
	}
	t.Fatalf("no socket %s -> %s in /proc/net/tcp", local, remote)
	return 0
}

// procAddr formats an IPv4 address as /proc/net/tcp does: the address in
// host (little-endian) byte order and the port, in hex.
func procAddr(t *testing.T, a net.Addr) string {
	t.Helper()
	ap := netip.MustParseAddrPort(a.String())
	ip := ap.Addr().As4()
	return strings.ToUpper(hex.EncodeToString([]byte{ip[3], ip[2], ip[1], ip[0]})) + fmt.Sprintf(":%04X", ap.Port())
}
