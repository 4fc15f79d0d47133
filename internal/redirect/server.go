package redirect

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"
	"github.com/valyala/fasthttp"
	toolscache "k8s.io/client-go/tools/cache"
	ctrl "sigs.k8s.io/controller-runtime"
)

// Server is the redirect listener as a manager runnable: it runs on every
// replica, serves once the index has seen the informers' initial lists, and
// on shutdown drains connections and then flushes the last clicks before
// Start returns.
type Server struct {
	o       Options
	ix      *Index
	flusher *flusher // nil: clicks are counted but never written (benchmarks)
	handler *handler
	synced  []toolscache.InformerSynced
	ready   atomic.Bool

	mu    sync.Mutex
	addr  net.Addr
	conns connServer // set once Start listens
}

// connServer serves the listener's connections with the fasthttp.Server:
// package connpark on Linux, fasthttp's own Serve elsewhere.
type connServer interface {
	Serve(ln net.Listener) error
	// Shutdown stops accepting, closes idle connections and waits for the
	// others until ctx is done.
	Shutdown(ctx context.Context) error
}

// NewServer returns a redirect server for ix. It counts clicks but writes
// them nowhere (benchmarks); Setup adds the flusher that stores them.
func NewServer(o Options, ix *Index) (*Server, error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	key, err := o.cookieKey()
	if err != nil {
		return nil, err
	}
	return &Server{o: o, ix: ix, handler: &handler{
		ix: ix, status: o.Status, password: newPasswords(key, o.PasswordConcurrency), trustedProxies: o.TrustedProxies,
	}}, nil
}

// NeedLeaderElection is false: every replica serves redirects.
func (s *Server) NeedLeaderElection() bool { return false }

// Synced reports whether the index has seen the informers' initial lists.
func (s *Server) Synced() bool {
	if s.ready.Load() {
		return true
	}
	for _, f := range s.synced {
		if !f() {
			return false
		}
	}
	s.ready.Store(true)
	return true
}

// Addr returns the listening address once Start listens, else nil.
func (s *Server) Addr() net.Addr {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.addr
}

// Start serves until ctx is done, then shuts down gracefully and flushes the
// clicks counted until then.
func (s *Server) Start(ctx context.Context) error {
	log := ctrl.LoggerFrom(ctx).WithName("redirect")
	ctx = ctrl.LoggerInto(ctx, log)
	// Answering before the index is filled would 404 live links.
	if !toolscache.WaitForCacheSync(ctx.Done(), s.synced...) {
		return nil // stopped before the informers synced: nothing counted yet
	}
	s.ready.Store(true)
	s.handler.password.log = log
	defer s.handler.password.close() // its worker process, if a password was checked
	if len(s.o.TrustedProxies) == 0 {
		log.Info("no --redirect-trusted-proxies: password attempts are limited per TCP peer; behind an ingress every visitor shares the ingress's limit")
	}
	// Replay before serving: the spooled counts go into the counters the
	// index just made.
	if s.flusher != nil && s.flusher.spool != nil {
		if err := s.flusher.spool.load(log.WithName("clicks"), s.flusher, s.ix.counterFor); err != nil {
			return fmt.Errorf("redirect server: %w", err)
		}
	}
	if s.flusher != nil {
		s.flusher.publishUnsure() // the replayed unknown-outcome writes
		defer pendingClicks.add(s.flusher)()
	}

	ln, err := net.Listen("tcp", s.o.BindAddress)
	if err != nil {
		return fmt.Errorf("redirect server: listen on %s: %w", s.o.BindAddress, err)
	}
	s.mu.Lock()
	s.addr = ln.Addr()
	s.mu.Unlock()

	srv := &fasthttp.Server{
		Handler:               s.handler.serve,
		Name:                  "kurz",
		NoDefaultServerHeader: true,
		NoDefaultContentType:  true,
		ReadTimeout:           10 * time.Second,
		WriteTimeout:          10 * time.Second,
		IdleTimeout:           90 * time.Second,
		MaxRequestBodySize:    8 << 10, // a password form; fasthttp answers 413 past it
		// Browsers send a parent domain's cookies and long campaign queries
		// to short domains; fasthttp's 4 KiB default turned such clicks into
		// 400s. 32 KiB is nginx's whole-header default.
		ReadBufferSize: 32 << 10,
		// The read and write buffers and the request context go back to
		// fasthttp's pools between requests, so an idle keep-alive
		// connection holds only its goroutine and socket, not 32 KiB.
		// fasthttp then reads the first byte of each request alone;
		// connpark reads the whole request there into a pooled buffer (one
		// read call, as without this), and that read is where it parks an
		// idle connection without its goroutine.
		ReduceMemoryUsage:            true,
		DisablePreParseMultipartForm: true,
		// The handler reads the clock itself; fasthttp's own read per
		// request would be a second one.
		LazyRequestTime:               true,
		SecureErrorLogMessage:         true,
		DisableHeaderNamesNormalizing: false,
		Logger:                        fasthttpLogger{log},
		ErrorHandler:                  requestError,
	}
	conns, err := newConnServer(srv, s.o)
	if err != nil {
		_ = ln.Close()
		return fmt.Errorf("redirect server: %w", err)
	}
	s.mu.Lock()
	s.conns = conns
	s.mu.Unlock()
	log.Info("serving redirects", "address", ln.Addr().String())
	serveErr := make(chan error, 1)
	go func() { serveErr <- conns.Serve(ln) }()

	flushCtx, stopFlushing := context.WithCancel(ctx)
	flushDone := make(chan struct{})
	go func() {
		defer close(flushDone)
		if s.flusher != nil {
			s.flusher.run(flushCtx, s.o.ClickFlushInterval)
		}
	}()

	var result error
	select {
	case <-ctx.Done():
	case err := <-serveErr:
		result = fmt.Errorf("redirect server: %w", err)
	}
	stopFlushing()
	<-flushDone

	// Drain: no click may arrive after the final flush has taken its counts.
	shutCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.o.ShutdownTimeout)
	if err := conns.Shutdown(shutCtx); err != nil {
		log.Info("redirect server did not drain in time", "error", err.Error())
	}
	cancel()

	if s.flusher != nil {
		finalCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.o.ShutdownTimeout)
		written, failed := s.flusher.flush(finalCtx, true)
		cancel()
		log.Info("final click flush", "links", written, "failed", failed)
		switch {
		case s.flusher.spool != nil:
			links, clicks, err := s.flusher.spool.save(s.flusher)
			switch {
			case err != nil:
				log.Error(err, "click counts lost: the final flush could not write them and the spool cannot be written", "path", s.flusher.spool.path, "links", failed)
				result = errors.Join(result, fmt.Errorf("write click spool: %w", err))
			case links > 0:
				log.Info("clicks the final flush could not write are spooled for the next start", "path", s.flusher.spool.path, "links", links, "clicks", clicks)
			}
		case failed > 0:
			log.Error(nil, "click counts lost: the final flush could not write them (API server unreachable, or the shutdown timeout passed) and there is no --click-spool", "links", failed)
		}
	}
	return result
}

// requestError answers requests fasthttp could not read.
func requestError(ctx *fasthttp.RequestCtx, err error) {
	status := http.StatusBadRequest
	switch {
	case errors.Is(err, fasthttp.ErrBodyTooLarge):
		status = http.StatusRequestEntityTooLarge
	case errors.As(err, new(*fasthttp.ErrSmallBuffer)):
		status = http.StatusRequestHeaderFieldsTooLarge
	}
	// Like every other answer: not cached, not indexed.
	ctx.Response.Header.SetCanonical(hdrCacheControl, valNoStore)
	ctx.Response.Header.SetCanonical(hdrRobots, valNoindex)
	ctx.SetStatusCode(status)
	ctx.SetContentType("text/plain; charset=utf-8")
	ctx.SetBodyString(http.StatusText(status) + "\n")
}

// fasthttpLogger sends fasthttp's connection errors to the manager's log at
// debug level: they are clients misbehaving, not kurz failing.
type fasthttpLogger struct{ log logr.Logger }

func (l fasthttpLogger) Printf(format string, args ...any) {
	l.log.V(1).Info(fmt.Sprintf(format, args...))
}
