//go:build linux

package connpark

import (
	"time"

	"github.com/valyala/fasthttp"
)

// deadlines are a request's read and write deadlines, and the ones the
// socket has. fasthttp would set three read deadlines and a write deadline
// per request (idle, read and write timeouts), each after a reading of the
// clock (two system-call-free but, on a virtual machine, not cheap vDSO
// calls) and each a lock and a timer heap update in the Go runtime: a few
// per cent of a redirect's CPU. New takes fasthttp's read and write
// timeouts over (timeouts), and conn sets both deadlines from one reading
// of the clock when a request's first bytes arrive (startRequest). It
// updates the socket only before a read or write, and only when the
// socket's deadline is not close enough: never later than wanted, and
// earlier by at most half the timeout, so a timeout fires after between
// half and all of its duration.
//
// Deadlines are on the deadline clock (clock.go), 0 for none.
type deadlines struct {
	readWant, readSet   int64
	writeWant, writeSet int64
}

// timeouts are the fasthttp.Server's read and write timeouts, which conn
// applies in its place: a request must arrive whole within read of its first
// bytes, and its answer be written within read+write of them (fasthttp
// counts the write timeout from the handler's return; a redirect's handler
// takes microseconds, and a request that took the whole read timeout to
// arrive still gets the whole write timeout).
type timeouts struct {
	read, write time.Duration
}

// takeTimeouts moves srv's read and write timeouts (and its idle timeout,
// which Options.IdleTimeout and the sweep enforce) out of fasthttp, so
// that it neither reads the clock nor sets deadlines per request.
func takeTimeouts(srv *fasthttp.Server) timeouts {
	t := timeouts{read: srv.ReadTimeout}
	if srv.WriteTimeout > 0 {
		t.write = srv.ReadTimeout + srv.WriteTimeout
	}
	srv.ReadTimeout, srv.WriteTimeout, srv.IdleTimeout = 0, 0, 0
	return t
}

// after is now plus d on the deadline clock, 0 (none) for no timeout.
func after(now int64, d time.Duration) int64 {
	if d <= 0 {
		return 0
	}
	return now + int64(d)
}

// startRequest notes the start of the request whose first bytes just
// arrived (RequestStart) and sets its deadlines.
func (c *conn) startRequest() {
	now := monoNow()
	c.start = now
	t := c.s.timeouts
	c.dl.readWant, c.dl.writeWant = after(now, t.read), after(now, t.write)
}

// SetDeadline, SetReadDeadline and SetWriteDeadline replace the request's
// deadlines until the next request starts (fasthttp calls them only for a
// handler that asks, through RequestCtx.Conn); the socket follows at the
// next read and write.
//
// SetDeadline is both.
func (c *conn) SetDeadline(t time.Time) error {
	c.dl.readWant, c.dl.writeWant = monoAt(t), monoAt(t)
	return nil
}

// SetReadDeadline is the read deadline.
func (c *conn) SetReadDeadline(t time.Time) error {
	c.dl.readWant = monoAt(t)
	return nil
}

// SetWriteDeadline is the write deadline.
func (c *conn) SetWriteDeadline(t time.Time) error {
	c.dl.writeWant = monoAt(t)
	return nil
}

// closeEnough reports whether a socket deadline set at set serves for want,
// a deadline at most timeout from now: not later, and at most half the
// timeout earlier (so it has not passed yet).
func closeEnough(set, want int64, timeout time.Duration) bool {
	if set == 0 || want == 0 {
		return set == want
	}
	d := want - set
	return d >= 0 && d <= int64(timeout/2)
}

// syncRead gives the socket the read deadline want, unless it has one close
// enough for a wait of at most timeout.
func (c *conn) syncRead(want int64, timeout time.Duration) error {
	if closeEnough(c.dl.readSet, want, timeout) {
		return nil
	}
	if err := c.TCPConn.SetReadDeadline(monoTime(want)); err != nil {
		return err
	}
	c.dl.readSet = want
	return nil
}

// syncWrite gives the socket the request's write deadline, unless it has one
// close enough.
func (c *conn) syncWrite() error {
	if closeEnough(c.dl.writeSet, c.dl.writeWant, c.s.timeouts.write) {
		return nil
	}
	if err := c.TCPConn.SetWriteDeadline(monoTime(c.dl.writeWant)); err != nil {
		return err
	}
	c.dl.writeSet = c.dl.writeWant
	return nil
}
