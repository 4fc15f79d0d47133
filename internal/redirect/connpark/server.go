//go:build linux

package connpark

import (
	"context"
	"errors"
	"math"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/valyala/fasthttp"
)

// Options are the caps and timeouts Serve enforces.
type Options struct {
	// MaxConns bounds the open connections, parked or served; past it a new
	// connection is answered 503 and closed. 0: no limit.
	MaxConns int
	// MaxConnsPerIP bounds the open connections of one peer address; past it
	// 429. 0: no limit.
	MaxConnsPerIP int
	// ReadTimeout closes a connection parked before its first request;
	// IdleTimeout one parked between requests (0: the ReadTimeout, as in
	// fasthttp). 0 for both: never.
	ReadTimeout, IdleTimeout time.Duration
	// Linger is how long a connection waits for its next request on its
	// goroutine before it parks (default 1s; up to a second more, as the
	// sweep that ends lingers runs once a second): a parked connection's
	// next request costs a new goroutine and ServeConn call, and a busy
	// connection's next request comes sooner.
	Linger time.Duration
	// Logger receives accept and parking errors (fasthttp's Logger if nil).
	Logger fasthttp.Logger
}

// Server serves a fasthttp.Server's connections, parking idle ones.
type Server struct {
	srv      *fasthttp.Server
	o        Options
	timeouts timeouts // a request's, taken from srv
	poll     *poller
	open     atomic.Int64
	perIP    perIP
	closing  atomic.Bool // set under mu
	wg       sync.WaitGroup

	mu         sync.Mutex
	ln         net.Listener
	acceptDone chan struct{} // closed when Serve returns; nil before Serve
	lastID     uint64
	conns      map[uint64]*conn // every open connection, by epoll user data
	// waiting: goroutines waiting for their connection's next request, in
	// linger order; fresh and idle: parked connections before their first
	// request and between requests, in deadline order.
	waiting, fresh, idle connList
	pollDone             chan struct{}
	stopSweep            chan struct{}
	shutdownOnce         sync.Once
}

// New prepares srv to be served by Serve. srv must set ReduceMemoryUsage
// (without it no connection ever parks) and not StreamRequestBody; its
// Concurrency and MaxConnsPerIP are replaced by the caps in o, which count
// connections for their whole life rather than per ServeConn call.
func New(srv *fasthttp.Server, o Options) (*Server, error) {
	if o.IdleTimeout == 0 {
		o.IdleTimeout = o.ReadTimeout
	}
	if o.Linger <= 0 {
		o.Linger = time.Second
	}
	if o.MaxConns <= 0 {
		o.MaxConns = math.MaxInt
	}
	if o.Logger == nil {
		o.Logger = srv.Logger
	}
	if o.Logger == nil {
		o.Logger = discard{}
	}
	p, err := newPoller()
	if err != nil {
		return nil, err
	}
	s := &Server{
		srv: srv, o: o, poll: p, conns: map[uint64]*conn{},
		pollDone: make(chan struct{}), stopSweep: make(chan struct{}),
	}
	s.timeouts = takeTimeouts(srv)
	// ServeConn counts its calls against these; a parked connection is
	// between calls, so the caps are Serve's.
	srv.Concurrency = math.MaxInt32
	srv.MaxConnsPerIP = 0
	srv.ErrorHandler = refused(srv.ErrorHandler)
	h := srv.Handler
	srv.Handler = func(ctx *fasthttp.RequestCtx) {
		h(ctx)
		if s.closing.Load() {
			ctx.SetConnectionClose() // the connection closes after this answer
		}
	}
	go s.pollLoop()
	go s.sweepLoop()
	return s, nil
}

// Serve accepts connections on ln, a TCP listener, until Shutdown. It
// returns nil after Shutdown, or the listener's error.
func (s *Server) Serve(ln net.Listener) error {
	s.mu.Lock()
	if s.closing.Load() || s.acceptDone != nil {
		s.mu.Unlock()
		_ = ln.Close()
		return nil
	}
	s.ln, s.acceptDone = ln, make(chan struct{})
	s.mu.Unlock()
	defer close(s.acceptDone)

	var lastRejectLog [2]time.Time
	backoff := time.Duration(0)
	for {
		nc, err := ln.Accept()
		if err != nil {
			if s.closing.Load() || errors.Is(err, net.ErrClosed) {
				return nil
			}
			// Out of descriptors and the like: wait and retry, as net/http.
			backoff = min(max(2*backoff, 5*time.Millisecond), time.Second)
			s.o.Logger.Printf("connpark: accept: %v; retrying in %v", err, backoff)
			time.Sleep(backoff)
			continue
		}
		backoff = 0
		tc, ok := nc.(*net.TCPConn)
		if !ok {
			_ = nc.Close()
			return errors.New("connpark: Serve needs a TCP listener")
		}
		c, status := s.admit(tc)
		if c == nil && status == 0 {
			continue // gone already
		}
		if c == nil {
			i, msg := 0, "The connection cannot be served because Server.Concurrency limit exceeded"
			if status == http.StatusTooManyRequests {
				i, msg = 1, "The number of connections from your ip exceeds MaxConnsPerIP"
			}
			reject(tc, status, s.srv.Name, msg)
			if time.Since(lastRejectLog[i]) > time.Minute {
				s.o.Logger.Printf("connpark: refused a connection from %s: %s", tc.RemoteAddr(), msg)
				lastRejectLog[i] = time.Now()
			}
			continue
		}
		s.wg.Add(1)
		go s.serve(c)
	}
}

// admit counts a new connection under the caps, or returns the status that
// refuses it.
func (s *Server) admit(tc *net.TCPConn) (*conn, int) {
	if s.open.Add(1) > int64(s.o.MaxConns) {
		s.open.Add(-1)
		return nil, http.StatusServiceUnavailable
	}
	c := &conn{TCPConn: tc, s: s}
	if s.o.MaxConnsPerIP > 0 {
		c.ip = peerIP(tc)
		if !s.perIP.add(c.ip, s.o.MaxConnsPerIP) {
			s.open.Add(-1)
			return nil, http.StatusTooManyRequests
		}
	}
	raw, err := tc.SyscallConn()
	if err != nil { // closed already
		s.forget(c)
		_ = tc.Close()
		return nil, 0
	}
	c.raw = raw
	c.initRawIO()
	c.ready.Store(true) // a request may be there already: the first read looks
	s.mu.Lock()
	s.lastID++
	c.id = s.lastID
	s.conns[c.id] = c
	s.mu.Unlock()
	if err := s.poll.add(c, c.id); err != nil {
		if !s.closing.Load() {
			s.o.Logger.Printf("connpark: cannot poll connection %q: %v", tc.RemoteAddr(), err)
		}
		_ = c.release()
		return nil, 0
	}
	return c, 0
}

// forget gives back a closed connection's place under the caps.
func (s *Server) forget(c *conn) {
	if c.ip.IsValid() {
		s.perIP.remove(c.ip)
	}
	s.open.Add(-1)
}

// serve runs ServeConn on c until the connection closes or parks.
func (s *Server) serve(c *conn) {
	defer s.wg.Done()
	for {
		c.boundary = true
		if err := s.srv.ServeConn(c); err != nil && !quiet(err) {
			s.o.Logger.Printf("error when serving connection %q<->%q: %v", c.LocalAddr(), c.RemoteAddr(), err)
		}
		if !c.park {
			return // closed
		}
		c.park = false
		if !s.park(c) {
			return
		}
	}
}

// quiet errors are clients going away, which fasthttp's Serve does not log
// either.
func quiet(err error) bool {
	msg := err.Error()
	return strings.Contains(msg, "broken pipe") || strings.Contains(msg, "reset by peer") ||
		strings.Contains(msg, "i/o timeout") || errors.Is(err, net.ErrClosed)
}

// Shutdown stops accepting, closes the connections waiting for a request
// and the parked ones, and waits until the served ones close (each at its
// next request boundary) or ctx is done.
func (s *Server) Shutdown(ctx context.Context) error {
	s.shutdownOnce.Do(func() {
		s.mu.Lock()
		s.closing.Store(true)
		ln, acceptDone := s.ln, s.acceptDone
		var waiting, parked []*conn
		for c := s.waiting.head; c != nil; c = s.waiting.head {
			s.waiting.remove(c)
			c.state = stRunning // its goroutine closes it
			waiting = append(waiting, c)
		}
		for _, l := range []*connList{&s.fresh, &s.idle} {
			for c := l.head; c != nil; c = l.head {
				l.remove(c)
				c.state = stClosing
				parked = append(parked, c)
			}
		}
		s.mu.Unlock()
		for _, c := range waiting {
			c.bell <- wakeClose
		}
		if ln != nil {
			_ = ln.Close()
			<-acceptDone // no new connection after this
		}
		for _, c := range parked {
			_ = c.release()
		}
		_ = s.poll.close()
		<-s.pollDone // no connection wakes after this
		close(s.stopSweep)
	})
	done := make(chan struct{})
	go func() { s.wg.Wait(); close(done) }()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Parked returns the number of connections between requests: waiting for
// the next one on their goroutine, or parked without one.
func (s *Server) Parked() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.waiting.n + s.fresh.n + s.idle.n
}

// Open returns the number of open connections, parked or served.
func (s *Server) Open() int { return int(s.open.Load()) }

type discard struct{}

func (discard) Printf(string, ...any) {}
