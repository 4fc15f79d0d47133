//go:build linux

package connpark

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// poller is the epoll instance every open connection is registered with,
// edge-triggered, from its accept to its close. Its descriptor is an
// os.File in Go's network poller: the polling goroutine sleeps in the Go
// scheduler until a connection has an event, instead of holding a thread in
// epoll_wait, and closing the file wakes it for good.
type poller struct {
	f   *os.File
	raw syscall.RawConn

	// wait's state, for its callback.
	pollFn func(epfd uintptr) bool
	events []unix.EpollEvent
	n      int
	err    error
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
	p := &poller{f: f, raw: raw}
	p.pollFn = p.poll
	return p, nil
}

// add registers c's socket for good, edge-triggered: an event each time
// data arrives or the peer goes, whoever holds the connection then. Closing
// the socket unregisters it. Events carry id.
func (p *poller) add(c *conn, id uint64) error {
	ev := unix.EpollEvent{Events: unix.EPOLLIN | unix.EPOLLRDHUP | unix.EPOLLET}
	ev.Fd, ev.Pad = int32(uint32(id)), int32(uint32(id>>32)) // the 64-bit user data, split in two
	var err error
	// Both descriptors are held for the call, so neither can be closed and
	// reused under it.
	if perr := p.raw.Control(func(epfd uintptr) {
		if cerr := c.raw.Control(func(fd uintptr) {
			err = unix.EpollCtl(int(epfd), unix.EPOLL_CTL_ADD, int(fd), &ev)
		}); cerr != nil {
			err = cerr
		}
	}); perr != nil {
		return perr
	}
	return err
}

// wait returns the next events, sleeping in the network poller while there
// are none; it fails once the poller is closed. One goroutine calls it.
func (p *poller) wait(events []unix.EpollEvent) (int, error) {
	p.events, p.n, p.err = events, 0, nil
	if err := p.raw.Read(p.pollFn); err != nil {
		return 0, err
	}
	if p.err != nil {
		return 0, fmt.Errorf("epoll_wait: %w", p.err)
	}
	return p.n, nil
}

// poll is wait's RawConn callback (p.pollFn, made once so that a wait
// allocates nothing): false waits until the epoll descriptor is readable.
func (p *poller) poll(epfd uintptr) bool {
	for {
		p.n, p.err = epollPoll(epfd, p.events)
		if !errors.Is(p.err, unix.EINTR) {
			return p.n != 0 || p.err != nil
		}
	}
}

func (p *poller) close() error { return p.f.Close() }

// epollPoll is epoll_wait with a zero timeout, as a raw system call (see
// rawio.go): it never blocks, and under load it runs for every batch of
// requests, where the scheduler's system call bookkeeping kept the runtime's
// monitor thread polling every 20 µs.
func epollPoll(epfd uintptr, events []unix.EpollEvent) (int, error) {
	n, _, e := unix.RawSyscall6(unix.SYS_EPOLL_PWAIT, epfd, uintptr(unsafe.Pointer(&events[0])), uintptr(len(events)), 0, 0, 0)
	if e != 0 {
		return 0, e
	}
	return int(n), nil //nolint:gosec // at most len(events)
}

func eventID(ev *unix.EpollEvent) uint64 {
	return uint64(uint32(ev.Fd)) | uint64(uint32(ev.Pad))<<32
}

// pollLoop hands each event to the connection's holder until the poller is
// closed: a goroutine waiting for its next request is woken, a parked
// connection gets a new goroutine (or is closed if its peer is gone), and a
// connection being served is marked readable for its next request boundary.
func (s *Server) pollLoop() {
	defer close(s.pollDone)
	events := make([]unix.EpollEvent, 256)
	var wake, spawn, gone []*conn
	for {
		n, err := s.poll.wait(events)
		if err != nil {
			if !s.closing.Load() {
				s.o.Logger.Printf("connpark: %v", err)
			}
			return
		}
		wake, spawn, gone = wake[:0], spawn[:0], gone[:0]
		s.mu.Lock()
		for i := range events[:n] {
			c := s.conns[eventID(&events[i])]
			if c == nil {
				continue // closed since
			}
			switch c.state {
			case stWaiting:
				s.waiting.remove(c)
				c.state = stRunning
				c.ready.Store(true)
				wake = append(wake, c)
			case stParked:
				c.list.remove(c)
				if events[i].Events&(unix.EPOLLHUP|unix.EPOLLERR) != 0 || s.closing.Load() {
					c.state = stClosing
					gone = append(gone, c) // reset or fully closed: nothing left to answer
					continue
				}
				// Readable, or the peer shut down its side (EPOLLRDHUP),
				// maybe after a last request: ServeConn reads either.
				c.state = stRunning
				c.ready.Store(true)
				s.wg.Add(1)
				spawn = append(spawn, c)
			case stClosing:
				// Being released by the sweep or Shutdown, which took it
				// off its list: nothing to wake, nothing to serve.
			default: // served, or parking: read at its next request boundary
				c.ready.Store(true)
			}
		}
		s.mu.Unlock()
		for i, c := range wake {
			c.bell <- wakeRead
			wake[i] = nil
		}
		for i, c := range spawn {
			go s.serve(c)
			spawn[i] = nil
		}
		for i, c := range gone {
			_ = c.release()
			gone[i] = nil
		}
		if n > 0 {
			// Let the woken connections answer before polling again: the
			// next requests arrive meanwhile and come in one epoll_wait,
			// instead of an empty one and a sleep in the network poller.
			runtime.Gosched()
		}
	}
}

// wait blocks c's goroutine at a request boundary until the poller reports
// c readable, the sweep ends its linger or its timeout, or shutdown. It
// returns at once if c became readable meanwhile.
func (s *Server) wait(c *conn) wakeReason {
	if c.bell == nil {
		c.bell = make(chan wakeReason, 1)
	}
	timeout := s.o.ReadTimeout
	if c.served {
		timeout = s.o.IdleTimeout
	}
	now := monoNow()
	s.mu.Lock()
	if c.ready.Load() || s.closing.Load() {
		s.mu.Unlock()
		return wakeRead
	}
	c.deadline = 1<<63 - 1
	if timeout > 0 {
		c.deadline = now + int64(timeout)
	}
	c.lingerEnd = now + int64(s.o.Linger)
	c.state = stWaiting
	s.waiting.pushBack(c)
	s.mu.Unlock()
	return <-c.bell
}

// park takes c, whose goroutine just ended ServeConn at a request boundary
// after its linger, off its goroutine until the poller reports it readable.
// It reports whether c must be served on at once instead (it became
// readable meanwhile). When shutting down it closes c.
func (s *Server) park(c *conn) bool {
	s.mu.Lock()
	if s.closing.Load() {
		s.mu.Unlock()
		_ = c.release()
		return false
	}
	if c.ready.Load() {
		c.state = stRunning
		s.mu.Unlock()
		return true
	}
	c.state = stParked
	c.bell = nil // a parked connection holds no goroutine, nor its doorbell
	if c.served {
		s.idle.pushBack(c)
	} else {
		s.fresh.pushBack(c)
	}
	s.mu.Unlock()
	return false
}

// sweepLoop ends lingers and closes connections past their deadline, once
// a second.
func (s *Server) sweepLoop() {
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		select {
		case <-s.stopSweep:
			return
		case now := <-t.C: // a time with a monotonic reading
			syncWall()
			s.sweep(monoAt(now))
		}
	}
}

// sweep sends the goroutines whose linger is over away (parking their
// connection, or closing it if its timeout passed too), and closes parked
// connections past their timeout. Every list is in deadline order: its
// connections entered it in time order with the same timeout.
func (s *Server) sweep(now int64) {
	var park, closeWaiting, expired []*conn
	s.mu.Lock()
	for c := s.waiting.head; c != nil && c.lingerEnd <= now; c = s.waiting.head {
		s.waiting.remove(c)
		if c.deadline <= now {
			c.state = stRunning // its goroutine closes it
			closeWaiting = append(closeWaiting, c)
		} else {
			c.state = stParking
			park = append(park, c)
		}
	}
	for _, l := range []*connList{&s.fresh, &s.idle} {
		for c := l.head; c != nil && c.deadline <= now; c = l.head {
			l.remove(c)
			c.state = stClosing
			expired = append(expired, c)
		}
	}
	s.mu.Unlock()
	for _, c := range park {
		c.bell <- wakePark
	}
	for _, c := range closeWaiting {
		c.bell <- wakeClose
	}
	for _, c := range expired {
		_ = c.release()
	}
}
