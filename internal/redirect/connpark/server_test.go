//go:build linux

package connpark

import (
	"context"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"github.com/valyala/fasthttp"
)

// TestKeepAliveParks: a keep-alive connection is parked after each answer
// and serves the next request on the same TCP connection.
func TestKeepAliveParks(t *testing.T) {
	g := NewWithT(t)
	ts := startServer(t, Options{}, nil)
	c := dial(t, "127.0.0.1", ts.addr)
	for _, path := range []string{"/first", "/second", "/third"} {
		status, body := c.get(t, path)
		g.Expect(status).To(Equal(http.StatusOK))
		g.Expect(body).To(Equal(path))
		g.Eventually(ts.Parked, 10*time.Second).Should(Equal(1), "parked after %s", path)
		g.Expect(ts.Open()).To(Equal(1))
	}
}

// TestPipelined: two requests in one write are both answered, in order.
func TestPipelined(t *testing.T) {
	g := NewWithT(t)
	ts := startServer(t, Options{}, nil)
	c := dial(t, "127.0.0.1", ts.addr)
	c.send(t, request("/a")+request("/b"))
	for _, path := range []string{"/a", "/b"} {
		status, body := c.answer(t)
		g.Expect(status).To(Equal(http.StatusOK))
		g.Expect(body).To(Equal(path))
	}
	g.Eventually(ts.Parked, 10*time.Second).Should(Equal(1))
	status, body := c.get(t, "/c")
	g.Expect(status).To(Equal(http.StatusOK))
	g.Expect(body).To(Equal("/c"))
}

// TestRequestWhileServed: a request that arrives while the previous one is
// being answered is answered next. The poller's only event for it comes
// while the connection is served (edge-triggered: none comes later), so the
// next request boundary must read it rather than wait for another.
func TestRequestWhileServed(t *testing.T) {
	g := NewWithT(t)
	ts, entered, release := startSlowServer(t)
	c := dial(t, "127.0.0.1", ts.addr)
	c.send(t, request("/slow"))
	<-entered
	c.send(t, request("/next"))
	g.Eventually(func() int { return c.unread(t) }, 10*time.Second).Should(BeNumerically(">", 0), "the next request waits in the socket")
	close(release)
	for _, path := range []string{"/slow", "/next"} {
		status, body := c.answer(t)
		g.Expect(status).To(Equal(http.StatusOK))
		g.Expect(body).To(Equal(path))
	}
}

// TestSplitRequest: a request whose headers arrive in two writes, the second
// only after the server has read the first, is answered: a new connection's
// first request and a parked connection's next one. The read in between
// waits instead of parking.
func TestSplitRequest(t *testing.T) {
	g := NewWithT(t)
	ts := startServer(t, Options{}, nil)
	for _, warm := range []bool{false, true} {
		c := dial(t, "127.0.0.1", ts.addr)
		if warm {
			status, _ := c.get(t, "/warm")
			g.Expect(status).To(Equal(http.StatusOK))
		}
		g.Eventually(ts.Parked, 10*time.Second).Should(Equal(1), "a connection with nothing to read parks")
		raw := request("/split")
		c.send(t, raw[:20])
		g.Eventually(func() int { return c.unread(t) }, 10*time.Second).Should(BeZero(), "the server read the first part")
		g.Eventually(ts.Parked, 10*time.Second).Should(BeZero())
		c.send(t, raw[20:])
		status, body := c.answer(t)
		g.Expect(status).To(Equal(http.StatusOK))
		g.Expect(body).To(Equal("/split"))
		c.Close()
		g.Eventually(ts.Open, 10*time.Second).Should(BeZero())
	}
}

// TestLargeHeaders: a parked connection reads a 31 KiB header block (the
// read buffer is 32 KiB), and a larger one gets 431.
func TestLargeHeaders(t *testing.T) {
	g := NewWithT(t)
	ts := startServer(t, Options{}, nil)
	c := dial(t, "127.0.0.1", ts.addr)
	status, _ := c.get(t, "/small")
	g.Expect(status).To(Equal(http.StatusOK))
	g.Eventually(ts.Parked, 10*time.Second).Should(Equal(1))
	c.send(t, request("/big", "Cookie: parent="+strings.Repeat("c", 31<<10)+"\r\n"))
	status, body := c.answer(t)
	g.Expect(status).To(Equal(http.StatusOK))
	g.Expect(body).To(Equal("/big"))
	g.Eventually(ts.Parked, 10*time.Second).Should(Equal(1))
	c.send(t, request("/huge", "Cookie: parent="+strings.Repeat("c", 40<<10)+"\r\n"))
	status, _ = c.answer(t)
	g.Expect(status).To(Equal(http.StatusRequestHeaderFieldsTooLarge))
}

// TestParkedTimeouts: a parked keep-alive connection is closed after the
// idle timeout, a new one that sends nothing after the read timeout.
func TestParkedTimeouts(t *testing.T) {
	g := NewWithT(t)
	ts := startServer(t, Options{ReadTimeout: time.Second, IdleTimeout: 2 * time.Second}, nil)
	idle, silent := dial(t, "127.0.0.1", ts.addr), dial(t, "127.0.0.1", ts.addr)
	status, _ := idle.get(t, "/k")
	g.Expect(status).To(Equal(http.StatusOK))
	g.Eventually(ts.Parked, 10*time.Second).Should(Equal(2))
	g.Expect(silent.closedByServer(t)).To(BeTrue())
	g.Expect(idle.closedByServer(t)).To(BeTrue())
	g.Eventually(ts.Parked, 10*time.Second).Should(BeZero())
	g.Eventually(ts.Open, 10*time.Second).Should(BeZero())
}

// TestPeerClosesWhileParked: connections whose peer closes while parked are
// closed and no longer counted, whether the peer sent FIN or RST.
func TestPeerClosesWhileParked(t *testing.T) {
	g := NewWithT(t)
	ts := startServer(t, Options{}, nil)
	var conns []*client
	for range 3 {
		c := dial(t, "127.0.0.1", ts.addr)
		status, _ := c.get(t, "/k")
		g.Expect(status).To(Equal(http.StatusOK))
		conns = append(conns, c)
	}
	g.Eventually(ts.Parked, 10*time.Second).Should(Equal(3))
	g.Expect(conns[0].Conn.(*net.TCPConn).SetLinger(0)).To(Succeed()) // RST
	for _, c := range conns {
		c.Close()
	}
	g.Eventually(ts.Parked, 10*time.Second).Should(BeZero())
	g.Eventually(ts.Open, 10*time.Second).Should(BeZero())
}

// TestShutdown: shutdown closes parked connections, lets a request being
// served finish with Connection: close, then returns; nothing is accepted
// after it.
func TestShutdown(t *testing.T) {
	g := NewWithT(t)
	ts, entered, release := startSlowServer(t)
	parked := []*client{dial(t, "127.0.0.1", ts.addr), dial(t, "127.0.0.1", ts.addr)}
	for _, c := range parked {
		status, _ := c.get(t, "/k")
		g.Expect(status).To(Equal(http.StatusOK))
	}
	g.Eventually(ts.Parked, 10*time.Second).Should(Equal(2))
	busy := dial(t, "127.0.0.1", ts.addr)
	busy.send(t, request("/slow"))
	<-entered

	shut := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		shut <- ts.Shutdown(ctx)
	}()
	for _, c := range parked {
		g.Expect(c.closedByServer(t)).To(BeTrue())
	}
	g.Expect(shut).NotTo(Receive(), "waits for the request being served")
	close(release)
	g.Expect(busy.SetDeadline(time.Now().Add(10 * time.Second))).To(Succeed())
	resp, err := http.ReadResponse(busy.br, nil)
	g.Expect(err).NotTo(HaveOccurred())
	resp.Body.Close()
	g.Expect(resp.StatusCode).To(Equal(http.StatusOK))
	g.Expect(resp.Close).To(BeTrue(), "Connection: close during shutdown")
	g.Eventually(shut, 10*time.Second).Should(Receive(BeNil()))
	g.Expect(ts.Open()).To(BeZero())
	_, err = net.DialTimeout("tcp", ts.addr, 5*time.Second)
	g.Expect(err).To(HaveOccurred(), "the listener is closed")
}

// TestConnCaps: the caps count parked connections too; past MaxConns a new
// connection gets 503, past MaxConnsPerIP 429, and a closed connection frees
// its place.
func TestConnCaps(t *testing.T) {
	g := NewWithT(t)
	ts := startServer(t, Options{MaxConns: 3, MaxConnsPerIP: 2}, nil)
	a, b := dial(t, "127.0.0.1", ts.addr), dial(t, "127.0.0.1", ts.addr)
	for _, c := range []*client{a, b} {
		status, _ := c.get(t, "/k")
		g.Expect(status).To(Equal(http.StatusOK))
	}
	g.Eventually(ts.Parked, 10*time.Second).Should(Equal(2))
	status, _ := dial(t, "127.0.0.1", ts.addr).answer(t)
	g.Expect(status).To(Equal(http.StatusTooManyRequests))
	other := dial(t, "127.0.0.2", ts.addr)
	status, _ = other.get(t, "/k")
	g.Expect(status).To(Equal(http.StatusOK))
	status, _ = dial(t, "127.0.0.3", ts.addr).answer(t)
	g.Expect(status).To(Equal(http.StatusServiceUnavailable))

	a.Close()
	g.Eventually(ts.Open, 10*time.Second).Should(Equal(2))
	status, _ = dial(t, "127.0.0.1", ts.addr).get(t, "/k")
	g.Expect(status).To(Equal(http.StatusOK))
	status, _ = b.get(t, "/k")
	g.Expect(status).To(Equal(http.StatusOK), "the parked connections still serve")
}

// TestServedTimeouts: the read and write timeouts fasthttp asks for reach
// the socket although conn applies them lazily: a connection that stops in
// the middle of a request, one that stops reading a long answer, and one
// that does so on a later request (its socket deadlines set by earlier
// requests) are all closed.
func TestServedTimeouts(t *testing.T) {
	g := NewWithT(t)
	big := strings.Repeat("x", 64<<20) // more than the socket buffers hold
	ts := startFastHTTP(t, Options{}, &fasthttp.Server{
		ReadTimeout: time.Second, WriteTimeout: time.Second,
		Handler: func(ctx *fasthttp.RequestCtx) {
			if string(ctx.Path()) == "/big" {
				ctx.SetBodyString(big)
				return
			}
			ctx.SetBodyString(string(ctx.Path()))
		},
	})

	stalled := dial(t, "127.0.0.1", ts.addr)
	stalled.send(t, request("/stalled")[:20])
	g.Expect(stalled.SetReadDeadline(time.Now().Add(30 * time.Second))).To(Succeed())
	answer, err := io.ReadAll(stalled.br)
	g.Expect(err).NotTo(HaveOccurred(), "stalled in a request: closed by the server")
	g.Expect(string(answer)).To(HavePrefix("HTTP/1.1 400")) // fasthttp answers a timed-out header read so

	for _, warm := range []int{0, 3} {
		reader := dial(t, "127.0.0.1", ts.addr)
		for range warm {
			status, body := reader.get(t, "/warm")
			g.Expect(status).To(Equal(http.StatusOK))
			g.Expect(body).To(Equal("/warm"))
		}
		reader.send(t, request("/big"))
		g.Eventually(ts.Open, 30*time.Second).Should(BeZero(), "a client not reading after %d requests", warm)
	}
}

// TestRefusedRequestIsAnsweredBeforeClose: a request fasthttp refuses
// before reading all of it (here a 200 KiB header block) gets its answer,
// then the server's FIN; closing with the rest unread would send a reset,
// which makes the client's kernel drop the answer before the client reads it.
func TestRefusedRequestIsAnsweredBeforeClose(t *testing.T) {
	g := NewWithT(t)
	ts := startServer(t, Options{}, nil)
	for range 20 {
		c := dial(t, "127.0.0.1", ts.addr)
		// Written while the answer is read: the server answers after 32 KiB,
		// and a loopback socket's buffers may not hold all of it.
		wrote := make(chan error, 1)
		go func() {
			_, err := io.WriteString(c, request("/huge", "Cookie: parent="+strings.Repeat("c", 200<<10)+"\r\n"))
			wrote <- err
		}()
		status, _ := c.answer(t)
		g.Expect(status).To(Equal(http.StatusRequestHeaderFieldsTooLarge))
		g.Expect(<-wrote).To(Succeed(), "the server read the rest of the request before closing")
		_, err := c.br.ReadByte()
		g.Expect(err).To(MatchError(io.EOF))
	}
}
