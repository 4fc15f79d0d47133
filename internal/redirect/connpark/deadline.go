//go:build linux

package connpark

import "time"

// deadlines are the read and write deadlines fasthttp asks for, and the ones
// the socket has. fasthttp sets three read deadlines and a write deadline
// per request (idle, read and write timeouts), and each is a lock and a
// timer heap update in the Go runtime, a few per cent of a redirect's CPU.
// conn keeps them here and updates the socket only before a read or write,
// and only when the socket's deadline is not close enough: never later than
// asked, and earlier by at most half the timeout, so a timeout fires after
// between half and all of its duration, as asked.
//
// Deadlines are on the deadline clock (clock.go), 0 for none.
type deadlines struct {
	readWant, readSet   int64
	writeWant, writeSet int64
}

// SetDeadline is fasthttp's; the socket follows at the next read and write.
func (c *conn) SetDeadline(t time.Time) error {
	c.dl.readWant, c.dl.writeWant = monoAt(t), monoAt(t)
	return nil
}

// SetReadDeadline is fasthttp's; the socket follows at the next read.
func (c *conn) SetReadDeadline(t time.Time) error {
	c.dl.readWant = monoAt(t)
	return nil
}

// SetWriteDeadline is fasthttp's; the socket follows at the next write.
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

// syncWrite gives the socket fasthttp's write deadline, unless it has one
// close enough.
func (c *conn) syncWrite() error {
	if closeEnough(c.dl.writeSet, c.dl.writeWant, c.s.srv.WriteTimeout) {
		return nil
	}
	if err := c.TCPConn.SetWriteDeadline(monoTime(c.dl.writeWant)); err != nil {
		return err
	}
	c.dl.writeSet = c.dl.writeWant
	return nil
}
