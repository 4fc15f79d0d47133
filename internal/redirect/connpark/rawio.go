//go:build linux

package connpark

import (
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
type rawIO struct {
	// Made once per connection, so calls allocate nothing.
	readFn, aheadFn, writeFn func(fd uintptr) bool
	buf                      []byte
	ahead                    *aheadBuf // what aheadOnce read into
	n                        int
	errno                    syscall.Errno
}

func (c *conn) initRawIO() {
	c.io.readFn, c.io.aheadFn, c.io.writeFn = c.readOnce, c.aheadOnce, c.writeOnce
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
	c.io.buf = p
	return c.readResult(c.raw.Read(c.io.readFn))
}

// sockReadAhead reads what the socket has into a pooled buffer, once there
// is something. The buffer is nil unless n > 0.
func (c *conn) sockReadAhead() (*aheadBuf, int, error) {
	n, err := c.readResult(c.raw.Read(c.io.aheadFn))
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
	c.io.buf, c.io.n, c.io.errno = p, 0, 0
	err := c.raw.Write(c.io.writeFn)
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
