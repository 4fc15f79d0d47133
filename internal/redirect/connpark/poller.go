//go:build linux

package connpark

import (
	"errors"
	"fmt"
	"os"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// poller is the epoll instance parked connections wait on. Its descriptor is
// an os.File in Go's network poller: the polling goroutine sleeps in the Go
// scheduler until a parked connection has an event, instead of holding a
// thread in epoll_wait, and closing the file wakes it for good.
type poller struct {
	f   *os.File
	raw syscall.RawConn
}

func newPoller() (*poller, error) {
	fd, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
	if err != nil {
		return nil, fmt.Errorf("epoll_create1: %w", err)
	}
	// Non-blocking, so os.NewFile registers it with the network poller.
	if err := unix.SetNonblock(fd, true); err != nil {
		_ = unix.Close(fd)
		return nil, fmt.Errorf("epoll: set non-blocking: %w", err)
	}
	f := os.NewFile(uintptr(fd), "connpark-epoll")
	raw, err := f.SyscallConn()
	if err != nil {
		_ = f.Close()
		return nil, err
	}
	return &poller{f: f, raw: raw}, nil
}

// arm waits for one event (EPOLLONESHOT) of c's socket: readable, or the
// peer gone. Events carry id.
func (p *poller) arm(c *conn, id uint64, op int) error {
	ev := unix.EpollEvent{Events: unix.EPOLLIN | unix.EPOLLRDHUP | unix.EPOLLONESHOT}
	ev.Fd, ev.Pad = int32(uint32(id)), int32(uint32(id>>32)) // the 64-bit user data, split in two
	var err error
	// Both descriptors are held for the call, so neither can be closed and
	// reused under it.
	if perr := p.raw.Control(func(epfd uintptr) {
		if cerr := c.raw.Control(func(fd uintptr) {
			err = unix.EpollCtl(int(epfd), op, int(fd), &ev)
		}); cerr != nil {
			err = cerr
		}
	}); perr != nil {
		return perr
	}
	return err
}

// wait returns the next events, sleeping in the network poller while there
// are none; it fails once the poller is closed.
func (p *poller) wait(events []unix.EpollEvent) (int, error) {
	var n int
	var err error
	if rerr := p.raw.Read(func(epfd uintptr) bool {
		for {
			n, err = unix.EpollWait(int(epfd), events, 0)
			if !errors.Is(err, unix.EINTR) {
				return n != 0 || err != nil // false: wait until readable
			}
		}
	}); rerr != nil {
		return 0, rerr
	}
	if err != nil {
		return 0, fmt.Errorf("epoll_wait: %w", err)
	}
	return n, nil
}

func (p *poller) close() error { return p.f.Close() }

func eventID(ev *unix.EpollEvent) uint64 {
	return uint64(uint32(ev.Fd)) | uint64(uint32(ev.Pad))<<32
}

// park hands c, whose ServeConn just ended at a request boundary, to the
// poller; when shutting down it closes c instead.
func (s *Server) park(c *conn) {
	timeout, list := s.o.ReadTimeout, &s.fresh
	if c.served {
		timeout, list = s.o.IdleTimeout, &s.idle
	}
	s.mu.Lock()
	if s.closing.Load() {
		s.mu.Unlock()
		_ = c.release()
		return
	}
	s.lastID++
	c.id = s.lastID
	c.deadline = time.Now().Add(timeout).UnixNano()
	if timeout <= 0 {
		c.deadline = 1<<63 - 1
	}
	list.pushBack(c)
	s.parked[c.id] = c
	op := unix.EPOLL_CTL_ADD
	if c.inEpoll {
		op = unix.EPOLL_CTL_MOD
	}
	c.inEpoll = true
	id := c.id
	s.mu.Unlock()
	// Armed after it is listed: an event may arrive at once (epoll reports
	// data that is already waiting), and must find it.
	if err := s.poll.arm(c, id, op); err != nil {
		if !s.closing.Load() {
			s.o.Logger.Printf("connpark: cannot park connection %q: %v", c.RemoteAddr(), err)
		}
		if s.unpark(id) != nil {
			_ = c.release()
		}
	}
}

// unpark takes the connection parked under id off its list, if it is still
// parked there.
func (s *Server) unpark(id uint64) *conn {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.parked[id]
	if c == nil {
		return nil
	}
	delete(s.parked, id)
	c.list.remove(c)
	return c
}

// pollLoop serves the parked connections that become readable, and closes
// those whose peer is gone, until the poller is closed.
func (s *Server) pollLoop() {
	defer close(s.pollDone)
	events := make([]unix.EpollEvent, 256)
	for {
		n, err := s.poll.wait(events)
		if err != nil {
			if !s.closing.Load() {
				s.o.Logger.Printf("connpark: %v", err)
			}
			return
		}
		for i := range events[:n] {
			c := s.unpark(eventID(&events[i]))
			switch {
			case c == nil: // closed meanwhile (timeout, shutdown)
			case events[i].Events&(unix.EPOLLHUP|unix.EPOLLERR) != 0:
				_ = c.release() // reset or fully closed: nothing left to answer
			default:
				// Readable, or the peer shut down its side (EPOLLRDHUP),
				// maybe after a last request: ServeConn reads either.
				s.wg.Add(1)
				go s.serve(c)
			}
		}
	}
}

// sweepLoop closes parked connections past their deadline, once a second.
func (s *Server) sweepLoop() {
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		select {
		case <-s.stopSweep:
			return
		case now := <-t.C:
			s.sweep(now.UnixNano())
		}
	}
}

func (s *Server) sweep(now int64) {
	var expired []*conn
	s.mu.Lock()
	for _, l := range []*connList{&s.fresh, &s.idle} {
		for c := l.head; c != nil && c.deadline <= now; c = l.head {
			l.remove(c)
			delete(s.parked, c.id)
			expired = append(expired, c)
		}
	}
	s.mu.Unlock()
	for _, c := range expired {
		_ = c.release()
	}
}
