//go:build linux

package connpark

import (
	"errors"
	"io"
	"net"
	"os"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// rawIO reads and writes a connection's socket with raw system calls, in
// Go's network poller like net.TCPConn but without telling the scheduler
// that a system call is under way (RawSyscall rather than Syscall).
//
// Why: the socket is non-blocking, so a read or write returns within
// microseconds, but on a virtualised machine a system call is slow enough
// that the runtime's monitor thread often finds one in progress. It then
// hands the goroutines' processor to another thread, and with the
// redirect server on one core (GOMAXPROCS 1) the two threads take turns
// through the kernel: context switches, futex wake-ups, and a monitor that
// keeps polling every 20 µs. Without the scheduler's system call
// bookkeeping none of that happens, and the call itself is cheaper.
// Nothing here can block: with nothing to read or no room to write the
// goroutine waits in the poller, as net.TCPConn's would, under the same
// deadlines.
// fasthttp reads and writes a connection from one goroutine, so one rawIO
// serves both.
type rawIO struct {
	fn    func(fd uintptr) bool // c.once, made once so calls allocate nothing
	ctl   func(fd uintptr)      // c.once for RawConn.Control, likewise
	op    ioOp
	buf   []byte
	ahead *aheadBuf // what aheadOnce read into
	n     int
	errno syscall.Errno
}

type ioOp uint8

const (
	opRead ioOp = iota
	opReadAhead
	opWrite
)

func (c *conn) initRawIO() {
	c.io.fn = c.once
	c.io.ctl = func(fd uintptr) { c.once(fd) }
}

// errWouldBlock is sockTryReadAhead finding nothing to read.
var errWouldBlock = errors.New("connpark: nothing to read yet")

// once is the RawConn callback of every read and write.
func (c *conn) once(fd uintptr) bool {
	switch c.io.op {
	case opReadAhead:
		return c.aheadOnce(fd)
	case opWrite:
		return c.writeOnce(fd)
	}
	return c.readOnce(fd)
}

// aheadOnce is readOnce into a pooled read-ahead buffer, held only for the
// call: a connection waiting for its next request holds none.
func (c *conn) aheadOnce(fd uintptr) bool {
	a := aheadPool.Get().(*aheadBuf)
	c.io.buf = a.b[:]
	if !c.readOnce(fd) {
		aheadPool.Put(a)
		return false
	}
	c.io.ahead = a
	return true
}

// readOnce is one read(2); false: nothing to read yet, wait.
func (c *conn) readOnce(fd uintptr) bool {
	for {
		n, _, e := unix.RawSyscall(unix.SYS_READ, fd, uintptr(unsafe.Pointer(&c.io.buf[0])), uintptr(len(c.io.buf)))
		switch e {
		case 0:
			c.io.n, c.io.errno = int(n), 0
			return true
		case unix.EINTR:
			continue
		case unix.EAGAIN:
			c.io.n, c.io.errno = 0, unix.EAGAIN // for sockTryReadAhead; RawConn.Read waits and calls again
			return false
		default:
			c.io.n, c.io.errno = 0, e
			return true
		}
	}
}

// writeOnce writes what is left of the buffer; false: the socket's buffer
// is full, wait.
func (c *conn) writeOnce(fd uintptr) bool {
	for len(c.io.buf) > 0 {
		n, _, e := unix.RawSyscall(unix.SYS_WRITE, fd, uintptr(unsafe.Pointer(&c.io.buf[0])), uintptr(len(c.io.buf)))
		switch {
		case e == unix.EINTR:
			continue
		case e == unix.EAGAIN:
			return false
		case e != 0:
			c.io.errno = e
			return true
		case n == 0:
			c.io.errno = unix.EIO // write(2) never writes nothing to a stream socket
			return true
		}
		c.io.n += int(n)
		c.io.buf = c.io.buf[n:]
	}
	return true
}

// sockRead is net.TCPConn's Read, with raw system calls.
func (c *conn) sockRead(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	c.io.op, c.io.buf = opRead, p
	return c.readResult(c.raw.Read(c.io.fn))
}

// sockTryReadAhead reads what the socket has into a pooled buffer, without
// waiting: errWouldBlock if it has nothing yet. It never looks at the
// socket's deadline, which the connection may have passed while it waited
// for this request. The buffer is nil unless n > 0.
func (c *conn) sockTryReadAhead() (*aheadBuf, int, error) {
	c.io.op = opReadAhead
	if err := c.raw.Control(c.io.ctl); err != nil {
		return nil, 0, err // closed
	}
	if c.io.errno == unix.EAGAIN {
		c.io.buf, c.io.errno = nil, 0
		return nil, 0, errWouldBlock
	}
	n, err := c.readResult(nil)
	a := c.io.ahead
	c.io.ahead = nil
	if n == 0 && a != nil {
		aheadPool.Put(a)
		a = nil
	}
	return a, n, err
}

func (c *conn) readResult(err error) (int, error) {
	c.io.buf = nil
	switch {
	case err != nil: // a deadline, or closed
		return 0, err
	case c.io.errno != 0:
		return 0, c.opError("read", c.io.errno)
	case c.io.n == 0:
		return 0, io.EOF
	}
	return c.io.n, nil
}

// sockWrite is net.TCPConn's Write, with raw system calls.
func (c *conn) sockWrite(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	c.io.op, c.io.buf, c.io.n, c.io.errno = opWrite, p, 0, 0
	err := c.raw.Write(c.io.fn)
	n := c.io.n
	c.io.buf = nil
	switch {
	case err != nil:
		return n, err
	case c.io.errno != 0:
		return n, c.opError("write", c.io.errno)
	}
	return n, nil
}

// opError is the error net.TCPConn returns for a failed system call.
func (c *conn) opError(op string, errno syscall.Errno) error {
	return &net.OpError{Op: op, Net: "tcp", Source: c.LocalAddr(), Addr: c.RemoteAddr(), Err: os.NewSyscallError(op, errno)}
}
