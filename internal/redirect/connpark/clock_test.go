//go:build linux

package connpark

import (
	"net"
	"net/http"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"github.com/valyala/fasthttp"
)

// TestDeadlineClock: a connection's timeout and linger, and fasthttp's
// socket deadlines, are kept on Go's monotonic clock, so a step of the wall
// clock moves none of them. The base carries a monotonic reading (Go's
// String shows it as "m=+..."), a waiting connection's deadline is that
// clock's now plus the idle timeout, and a fasthttp deadline converted back
// for the socket is the same instant with its monotonic reading.
func TestDeadlineClock(t *testing.T) {
	g := NewWithT(t)
	g.Expect(clockBase.String()).To(ContainSubstring(" m=+"), "the base has a monotonic reading")

	ts := startServer(t, Options{ReadTimeout: time.Minute, IdleTimeout: 2 * time.Minute, Linger: time.Hour}, nil)
	c := dial(t, "127.0.0.1", ts.addr)
	before := int64(time.Since(clockBase)) // Since: by the monotonic readings
	status, _ := c.get(t, "/k")
	g.Expect(status).To(Equal(http.StatusOK))
	g.Eventually(ts.Parked, 10*time.Second).Should(Equal(1))
	after := int64(time.Since(clockBase))
	ts.mu.Lock()
	g.Expect(ts.waiting.n).To(Equal(1))
	deadline, lingerEnd := ts.waiting.head.deadline, ts.waiting.head.lingerEnd
	ts.mu.Unlock()
	g.Expect(deadline).To(BeNumerically(">=", before+int64(2*time.Minute)))
	g.Expect(deadline).To(BeNumerically("<=", after+int64(2*time.Minute)))
	g.Expect(lingerEnd).To(BeNumerically(">=", before+int64(time.Hour)))
	g.Expect(lingerEnd).To(BeNumerically("<=", after+int64(time.Hour)))

	want := time.Now().Add(10 * time.Second) // as fasthttp sets them
	got := monoTime(monoAt(want))
	g.Expect(got.Equal(want)).To(BeTrue(), "%v, not %v", got, want)
	g.Expect(got.String()).To(ContainSubstring(" m=+"), "the socket's deadline keeps the monotonic reading")
	g.Expect(monoAt(time.Time{})).To(BeZero())
	g.Expect(monoTime(0).IsZero()).To(BeTrue())
	g.Expect(monoAt(clockBase)).NotTo(BeZero(), "only the zero time means no deadline")
}

// TestRequestStart: a handler learns when its request's first bytes were
// read, on the wall clock and as a duration since, from the one reading
// connpark took; a connection connpark does not serve has none. The wall
// offset the sweep refreshes comes back from whatever it was.
func TestRequestStart(t *testing.T) {
	g := NewWithT(t)
	type seen struct {
		wall    int64
		elapsed time.Duration
		ok      bool
	}
	got := make(chan seen, 1)
	ts := startServer(t, Options{ReadTimeout: time.Minute, IdleTimeout: time.Minute}, func(ctx *fasthttp.RequestCtx) {
		s, ok := RequestStart(ctx.Conn())
		got <- seen{s.UnixNano(), s.Elapsed(), ok}
	})
	c := dial(t, "127.0.0.1", ts.addr)
	before := time.Now()
	status, _ := c.get(t, "/k")
	took := time.Since(before)
	g.Expect(status).To(Equal(http.StatusOK))
	s := <-got
	g.Expect(s.ok).To(BeTrue())
	// The wall offset is taken from one time.Now; two readings of it may
	// differ by a microsecond.
	g.Expect(s.wall).To(BeNumerically("~", before.UnixNano()+int64(took)/2, int64(took)/2+int64(time.Millisecond)))
	g.Expect(s.elapsed).To(BeNumerically(">=", 0))
	g.Expect(s.elapsed).To(BeNumerically("<=", took))

	_, ok := RequestStart(&net.TCPConn{})
	g.Expect(ok).To(BeFalse(), "not a connection Serve serves")

	good := wallOffset.Load()
	wallOffset.Store(good + int64(time.Hour)) // as if the wall clock had stepped back an hour
	syncWall()
	g.Expect(wallOffset.Load()).To(BeNumerically("~", good, int64(time.Millisecond)))
}
