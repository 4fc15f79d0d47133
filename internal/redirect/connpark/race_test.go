//go:build linux

package connpark

import (
	"bufio"
	"context"
	"io"
	"math"
	"net"
	"net/http"
	"sync"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"github.com/valyala/fasthttp"
)

// raceConns is how many parked connections each round races.
const raceConns = 64

// TestParkedRacesSweep: parked connections whose peers close (FIN or RST) or
// send a request while the sweep expires them. The sweep takes them off
// their lists and releases them one by one; the poller's events for the
// ones not yet released must not touch them (it once unlinked them from a
// list they were no longer on, and the poller's goroutine panicked). Every
// connection is closed in the end, each peer's request answered or its
// connection closed.
func TestParkedRacesSweep(t *testing.T) {
	g := NewWithT(t)
	ts := startServer(t, Options{}, nil)
	for round := range 20 {
		peers := parkConns(t, ts, raceConns)
		start := make(chan struct{})
		var wg sync.WaitGroup
		for i, c := range peers {
			wg.Go(func() { <-start; racePeer(c, i) })
		}
		close(start)
		// Past every deadline: the sweep closes all that are still parked.
		ts.sweep(math.MaxInt64)
		wg.Wait()
		g.Eventually(ts.Open, 10*time.Second).Should(BeZero(), "round %d: every connection closed", round)
		g.Expect(ts.Parked()).To(BeZero())
	}
}

// TestParkedRacesShutdown: as TestParkedRacesSweep, with Shutdown taking
// the parked connections.
func TestParkedRacesShutdown(t *testing.T) {
	g := NewWithT(t)
	for round := range 20 {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		g.Expect(err).NotTo(HaveOccurred())
		srv := &fasthttp.Server{
			Handler:     func(ctx *fasthttp.RequestCtx) { ctx.SetBodyString(string(ctx.Path())) },
			ReadTimeout: 10 * time.Second, WriteTimeout: 10 * time.Second, IdleTimeout: 90 * time.Second,
			ReadBufferSize: 32 << 10, ReduceMemoryUsage: true,
		}
		s, err := New(srv, Options{ReadTimeout: srv.ReadTimeout, IdleTimeout: srv.IdleTimeout})
		g.Expect(err).NotTo(HaveOccurred())
		served := make(chan error, 1)
		go func() { served <- s.Serve(ln) }()
		ts := &testServer{Server: s, addr: ln.Addr().String(), served: served}

		peers := parkConns(t, ts, raceConns)
		start := make(chan struct{})
		var wg sync.WaitGroup
		for i, c := range peers {
			wg.Go(func() { <-start; racePeer(c, i) })
		}
		close(start)
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		g.Expect(s.Shutdown(ctx)).To(Succeed(), "round %d", round)
		cancel()
		g.Expect(<-served).To(Succeed())
		wg.Wait()
		g.Expect(s.Open()).To(BeZero(), "round %d: every connection closed", round)
		g.Expect(s.Parked()).To(BeZero())
	}
}

// parkConns opens n connections, each answered once, and parks them: a
// sweep just past their linger (and before their timeout) sends their
// goroutines away.
func parkConns(t *testing.T, ts *testServer, n int) []*client {
	t.Helper()
	g := NewWithT(t)
	peers := make([]*client, n)
	for i := range peers {
		peers[i] = dial(t, "127.0.0.1", ts.addr)
		status, _ := peers[i].get(t, "/k")
		g.Expect(status).To(Equal(http.StatusOK))
	}
	g.Eventually(ts.Parked, 10*time.Second).Should(Equal(n))
	g.Eventually(func() int {
		ts.sweep(monoNow() + int64(ts.o.Linger))
		ts.mu.Lock()
		defer ts.mu.Unlock()
		return ts.idle.n
	}, 10*time.Second).Should(Equal(n), "all parked, none waiting on a goroutine")
	return peers
}

// racePeer does to a parked connection what peers do: a third reset it, a
// third close it, a third send a request and read until the answer or the
// close. None of them checks the outcome: the server may serve or close
// each one first.
func racePeer(c *client, i int) {
	switch i % 3 {
	case 0:
		_ = c.Conn.(*net.TCPConn).SetLinger(0)
		_ = c.Close()
	case 1:
		_ = c.Close()
	default:
		_ = c.SetDeadline(time.Now().Add(10 * time.Second))
		if _, err := io.WriteString(c, request("/race")); err == nil {
			if resp, err := http.ReadResponse(bufio.NewReader(c), nil); err == nil {
				_, _ = io.Copy(io.Discard, resp.Body)
				_ = resp.Body.Close()
			}
		}
		_ = c.Close()
	}
}
