//go:build linux

package connpark

import (
	"errors"
	"io"
	"net"
	"net/netip"
	"sync"
	"sync/atomic"
	"syscall"
)

// conn is a connection as ServeConn sees it: Read waits for a request's
// first byte on the poller, and parks the connection when its linger ends;
// Close then leaves it open for the poller.
type conn struct {
	*net.TCPConn
	s   *Server
	raw syscall.RawConn
	ip  netip.Addr // the per-IP key; invalid without MaxConnsPerIP
	id  uint64     // epoll user data; 0 is the poller's own

	// ready is set by the poller when data arrived (or the peer went) since
	// the connection's last read at a request boundary: only then does that
	// read ask the socket.
	ready atomic.Bool

	// Used only by the goroutine serving the connection.
	boundary bool // the next one-byte Read is a request's first byte
	served   bool // a response was written: idle, not new, when parked
	park     bool // ServeConn is ending so the connection can be parked
	refused  bool // fasthttp refused a request it could not read: drain before closing (drain.go)
	// ahead holds what the request-boundary read got past the first byte,
	// until fasthttp's next read takes it; nil in between (see Read).
	ahead *aheadBuf
	dl    deadlines
	start int64 // on the deadline clock: the current request's first bytes (RequestStart)
	io    rawIO

	closed atomic.Bool

	// Guarded by Server.mu.
	state      connState
	bell       chan wakeReason // wakes the goroutine waiting in Server.wait
	prev, next *conn
	list       *connList
	deadline   int64 // on the deadline clock (clock.go): closed if still waiting or parked then
	lingerEnd  int64 // on the deadline clock: parked if still waiting then
}

// connState is who holds a connection.
type connState uint8

const (
	stRunning connState = iota // its goroutine serves it
	stWaiting                  // its goroutine waits for the next request (Server.waiting)
	stParking                  // its goroutine was told to end (linger over)
	stParked                   // no goroutine (Server.fresh or Server.idle)
	// stClosing: taken off its list by the sweep, Shutdown or the poller,
	// without a goroutine, and released by whoever took it once the lock is
	// free. The poller ignores its events: it is in no list, and nothing
	// serves it again.
	stClosing
)

// wakeReason is what a waiting goroutine is woken for.
type wakeReason uint8

const (
	wakeRead  wakeReason = iota // the socket is readable
	wakePark                    // the linger is over
	wakeClose                   // the timeout is over, or shutdown
)

// Read is fasthttp's read. A one-byte read at a request boundary
// (acquireByteReader, with ReduceMemoryUsage) asks the socket only once the
// poller has reported data since the last such read; until then the
// goroutine waits (Server.wait) without a read system call that would find
// nothing. If nothing comes within the linger it reports EOF, which ends
// ServeConn quietly, and marks the connection for parking; past the
// timeout, or when shutting down, it reports EOF to close it. The bytes it
// gets start the request's read and write deadlines. Any other read is part
// of a request and blocks under its read deadline.
//
// The boundary read asks the socket for more than the byte fasthttp wants
// and keeps the rest for fasthttp's next read, which comes at once (its
// buffered reader filling up behind the first byte): one read system call
// per request. The buffer is pooled and given back as soon as fasthttp has
// taken its bytes, so idle connections still hold none.
func (c *conn) Read(p []byte) (int, error) {
	if c.ahead != nil {
		return c.readAhead(p), nil
	}
	if !c.boundary || len(p) != 1 {
		c.boundary = false
		// Within a request: its read deadline, exactly.
		if err := c.syncRead(c.dl.readWant, 0); err != nil {
			return 0, err
		}
		n, err := c.sockRead(p)
		// Edge-triggered: the socket may hold more than this read took, and
		// no event will say so.
		c.ready.Store(true)
		return n, err
	}
	c.boundary = false
	a, n, err := c.nextRequest()
	if n == 0 {
		return 0, err
	}
	c.startRequest()
	p[0] = a.b[0]
	if n == 1 {
		aheadPool.Put(a)
		return 1, nil
	}
	a.off, a.end = 1, n
	c.ahead = a
	return 1, nil
}

// nextRequest reads what the socket has at a request boundary, once there is
// something; with nothing read (n == 0) it returns the error that ends
// ServeConn, io.EOF with c.park set when the connection is to be parked.
func (c *conn) nextRequest() (*aheadBuf, int, error) {
	for {
		if c.s.closing.Load() {
			return nil, 0, io.EOF // shutting down: close instead of waiting for a request
		}
		if c.ready.Swap(false) {
			a, n, err := c.sockTryReadAhead()
			if !errors.Is(err, errWouldBlock) {
				if a != nil && n == len(a.b) {
					c.ready.Store(true) // a full buffer: there may be more
				}
				return a, n, err
			}
		}
		switch c.s.wait(c) {
		case wakePark:
			c.park = true
			return nil, 0, io.EOF
		case wakeClose:
			return nil, 0, io.EOF
		}
	}
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
	if c.mustDrain() {
		c.drain()
	}
	return c.release()
}

// release closes the connection once and gives back its place under the caps.
func (c *conn) release() error {
	if !c.closed.CompareAndSwap(false, true) {
		return nil
	}
	c.s.mu.Lock()
	delete(c.s.conns, c.id)
	if c.list != nil {
		c.list.remove(c)
	}
	c.state = stClosing
	c.s.mu.Unlock()
	err := c.TCPConn.Close()
	c.s.forget(c)
	return err
}
