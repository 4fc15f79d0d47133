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
// on shutdown drains connections and then finishes its click consumers
// (the final click flush) before Start returns.
type Server struct {
	o         Options
	ix        *Index
	consumers []ClickConsumer
	handler   *handler
	synced    []toolscache.InformerSynced
	ready     atomic.Bool

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

// ClickConsumer is a subsystem that takes what the handler records on a
// click (handler.clicked), with a lifecycle bound to the server's: the
// click Writer (package clicks), which stores the counts; click analytics
// and webhook click batches are consumers too. The server runs every
// consumer the same way, in order:
//
//   - Replay, once the index holds the Links, before the first request is
//     served: take back what the previous process left (the click spool).
//     An error stops the server before it serves.
//   - Run, while serving, until its context is done.
//   - Finish, once the listener drained, so nothing is clicked any more:
//     the last write, within --redirect-shutdown-timeout (shared, in
//     order). Every consumer that replayed is finished.
type ClickConsumer interface {
	Replay(ctx context.Context) error
	Run(ctx context.Context)
	Finish(ctx context.Context) error
}

// NewServer returns a redirect server for ix whose clicks go to consumers
// (none: clicks are counted in ix's Slots but go nowhere, as in the
// benchmarks; Setup adds the click Writer).
func NewServer(o Options, ix *Index, consumers ...ClickConsumer) (*Server, error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	key, err := o.cookieKey()
	if err != nil {
		return nil, err
	}
	h := &handler{
		ix: ix, status: o.Status, password: newPasswords(key, o.PasswordConcurrency), trustedProxies: o.TrustedProxies,
		analytics: o.Analytics.Ring, onDemand: o.Analytics.OnDemand,
	}
	if (o.Analytics.Ring != nil || o.Analytics.OnDemand != nil) && o.Analytics.CountryHeader != "" {
		h.countryHeader = fasthttp.AppendNormalizedHeaderKey(nil, o.Analytics.CountryHeader)
	}
	return &Server{o: o, ix: ix, consumers: consumers, handler: h}, nil
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

// Ready reports, for /readyz, whether the server answers from a whole
// index: the index holds the initial lists and the server listens. The
// index is whole at the feed's bookmark, before the caches' sync, while
// Start listens only after that sync and the consumers' replay.
func (s *Server) Ready() error {
	if !s.Synced() {
		return errors.New("redirect index not synced yet")
	}
	if s.Addr() == nil {
		return errors.New("redirect server not listening yet")
	}
	return nil
}

// Addr returns the listening address once Start listens, else nil.
func (s *Server) Addr() net.Addr {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.addr
}

// Start serves until ctx is done, then shuts down gracefully and finishes
// the click consumers (see ClickConsumer).
func (s *Server) Start(ctx context.Context) (err error) {
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
	// index just made. Whatever happens next, what replayed is finished
	// (after the drain, when the server served).
	replayed := 0
	defer func() { err = errors.Join(err, s.finish(ctx, s.consumers[:replayed])) }()
	for _, c := range s.consumers {
		if err := c.Replay(ctx); err != nil {
			return fmt.Errorf("redirect server: %w", err)
		}
		replayed++
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
		// The handler takes the request's start from connpark's reading
		// of the clock (reqstart_linux.go); fasthttp's own read per
		// request would be one more.
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

	runCtx, stopRunning := context.WithCancel(ctx)
	var running sync.WaitGroup
	for _, c := range s.consumers {
		running.Go(func() { c.Run(runCtx) })
	}

	var result error
	select {
	case <-ctx.Done():
	case err := <-serveErr:
		result = fmt.Errorf("redirect server: %w", err)
	}
	stopRunning()
	running.Wait()

	// Drain: no click may arrive after the consumers' Finish has begun.
	shutCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.o.ShutdownTimeout)
	if err := conns.Shutdown(shutCtx); err != nil {
		log.Info("redirect server did not drain in time", "error", err.Error())
	}
	cancel()
	return result // and finish (deferred)
}

// finish runs the Finish of cs, in order, within one
// --redirect-shutdown-timeout.
func (s *Server) finish(ctx context.Context, cs []ClickConsumer) error {
	if len(cs) == 0 {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.o.ShutdownTimeout)
	defer cancel()
	var errs []error
	for _, c := range cs {
		errs = append(errs, c.Finish(ctx))
	}
	return errors.Join(errs...)
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
