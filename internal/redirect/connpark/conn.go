//go:build linux

package connpark

import (
	"errors"
	"io"
	"net"
	"net/netip"
	"os"
	"sync/atomic"
	"syscall"
	"time"
)

// conn is a connection as ServeConn sees it: Read parks it at a request
// boundary with nothing to read, Close then leaves it open for the poller.
type conn struct {
	*net.TCPConn
	s   *Server
	raw syscall.RawConn
	ip  netip.Addr // the per-IP key; invalid without MaxConnsPerIP

	// Used only by the goroutine serving the connection.
	boundary bool // the next one-byte Read is a request's first byte
	served   bool // a response was written: idle, not new, when parked
	park     bool // ServeConn is ending so the connection can be parked

	closed atomic.Bool

	// Guarded by Server.mu while parked.
	id         uint64 // epoll user data of this parking; 0 is the poller's own
	prev, next *conn
	list       *connList
	deadline   int64 // unix nanoseconds
	inEpoll    bool  // registered: the next parking re-arms with EPOLL_CTL_MOD
}

// Read is fasthttp's read. A one-byte read at a request boundary
// (acquireByteReader, with ReduceMemoryUsage) waits at most the linger: a
// busy connection's next request usually comes sooner, and parking it would
// cost an epoll round trip and a new ServeConn call. With nothing read by
// then it reports EOF, which ends ServeConn quietly, and marks the
// connection for parking. Any other read is part of a request and blocks
// under fasthttp's deadlines.
func (c *conn) Read(p []byte) (int, error) {
	if !c.boundary || len(p) != 1 {
		c.boundary = false
		return c.TCPConn.Read(p)
	}
	c.boundary = false
	if c.s.closing.Load() {
		return 0, io.EOF // shutting down: close instead of waiting for a request
	}
	// fasthttp set its own deadline just before, and sets the read timeout
	// once the byte is here.
	if err := c.SetReadDeadline(time.Now().Add(c.s.o.Linger)); err != nil {
		return 0, err
	}
	n, err := c.TCPConn.Read(p)
	if n == 0 && errors.Is(err, os.ErrDeadlineExceeded) {
		c.park = true
		return 0, io.EOF
	}
	return n, err
}

// Write is fasthttp's write of a response: the next one-byte read starts the
// next request.
func (c *conn) Write(p []byte) (int, error) {
	c.boundary, c.served = true, true
	return c.TCPConn.Write(p)
}

// Close is ServeConn's close: ignored when the connection is to be parked.
func (c *conn) Close() error {
	if c.park {
		return nil
	}
	return c.release()
}

// release closes the connection once and gives back its place under the caps.
func (c *conn) release() error {
	if !c.closed.CompareAndSwap(false, true) {
		return nil
	}
	err := c.TCPConn.Close()
	c.s.forget(c)
	return err
}
