//go:build linux

package connpark

import (
	"errors"
	"io"
	"net"
	"net/netip"
	"os"
	"sync"
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
	// ahead holds what the request-boundary read got past the first byte,
	// until fasthttp's next read takes it; nil in between (see Read).
	ahead *aheadBuf
	dl    deadlines
	io    rawIO

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
//
// The boundary read asks the socket for more than the byte fasthttp wants
// and keeps the rest for fasthttp's next read, which comes at once (its
// buffered reader filling up behind the first byte): one read system call
// per request, as without ReduceMemoryUsage, instead of two. The buffer is
// pooled and given back as soon as fasthttp has taken its bytes, so idle
// connections still hold none.
func (c *conn) Read(p []byte) (int, error) {
	if c.ahead != nil {
		return c.readAhead(p), nil
	}
	if !c.boundary || len(p) != 1 {
		c.boundary = false
		// Within a request: fasthttp's read timeout, exactly.
		if err := c.syncRead(c.dl.readWant, 0); err != nil {
			return 0, err
		}
		return c.sockRead(p)
	}
	c.boundary = false
	if c.s.closing.Load() {
		return 0, io.EOF // shutting down: close instead of waiting for a request
	}
	// Wait for the linger, or less if fasthttp's idle deadline (set just
	// before) comes sooner; fasthttp sets the read timeout once the byte is
	// here.
	now := time.Now().UnixNano()
	until := now + int64(c.s.o.Linger)
	if w := c.dl.readWant; w != 0 && w < until {
		until = w
	}
	if err := c.syncRead(until, time.Duration(until-now)); err != nil {
		return 0, err
	}
	a, n, err := c.sockReadAhead()
	if n == 0 {
		if errors.Is(err, os.ErrDeadlineExceeded) {
			c.park = true
			return 0, io.EOF
		}
		return 0, err
	}
	p[0] = a.b[0]
	if n == 1 {
		aheadPool.Put(a)
		return 1, nil
	}
	a.off, a.end = 1, n
	c.ahead = a
	return 1, nil
}

// aheadBuf is a boundary read's buffer: b[off:end] is not yet read by
// fasthttp. 4 KiB holds most requests whole; a larger one is read on from
// the socket once the buffer is drained.
type aheadBuf struct {
	b        [4 << 10]byte
	off, end int
}

var aheadPool = sync.Pool{New: func() any { return new(aheadBuf) }}

// readAhead gives p what the boundary read got, and the buffer back to the
// pool once it is drained.
func (c *conn) readAhead(p []byte) int {
	a := c.ahead
	n := copy(p, a.b[a.off:a.end])
	a.off += n
	if a.off == a.end {
		c.ahead = nil
		aheadPool.Put(a)
	}
	return n
}

// Write is fasthttp's write of a response: the next one-byte read starts the
// next request.
func (c *conn) Write(p []byte) (int, error) {
	c.boundary, c.served = true, true
	if err := c.syncWrite(); err != nil {
		return 0, err
	}
	return c.sockWrite(p)
}

// Close is ServeConn's close: ignored when the connection is to be parked.
func (c *conn) Close() error {
	if c.park {
		return nil
	}
	if a := c.ahead; a != nil { // a request cut short: nothing reads it now
		c.ahead = nil
		aheadPool.Put(a)
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
