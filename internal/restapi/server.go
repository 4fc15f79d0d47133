package restapi

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	kurzv1alpha1 "github.com/kurz-dev/kurz/api/v1alpha1"
	"github.com/kurz-dev/kurz/internal/consolesession"
	"github.com/kurz-dev/kurz/internal/fieldindex"
	"github.com/kurz-dev/kurz/internal/keyedlimit"
	"github.com/kurz-dev/kurz/internal/linkquery"
	"github.com/kurz-dev/kurz/internal/qr"
)

// Server timeouts: generous enough for a large page or QR image on a slow
// client, short enough that idle or stuck connections do not pile up.
const (
	readHeaderTimeout = 10 * time.Second
	readTimeout       = 30 * time.Second
	writeTimeout      = 60 * time.Second
	idleTimeout       = 120 * time.Second
	// maxBodyBytes bounds every request body (413 beyond) but the bulk
	// routes', maxBulkBodyBytes: 100 links with every field at its longest
	// (about 12 KiB of JSON each) fit twice over.
	maxBodyBytes     = 64 << 10
	maxBulkBodyBytes = 2 << 20
)

// server is the /api/v1 server: a manager.Runnable that serves on every
// replica.
type server struct {
	opts Options
	// client reads from the informer cache and writes to kube-apiserver.
	client client.Client
	// live reads from kube-apiserver, for re-reads after a write conflict.
	live client.Reader
	// cachedLinks finds the Links holding a domain and key in the cache's
	// index.
	cachedLinks *fieldindex.Links

	links *resource[*kurzv1alpha1.Link, linkView]
	// linkQuery answers filtered and sorted link lists and the tags; it is
	// fed with the links' list index (see Setup).
	linkQuery *linkquery.Index
	domains   *resource[*kurzv1alpha1.Domain, domainView]
	// webhooks is /api/v1/webhooks (webhooks.go).
	webhooks *resource[*kurzv1alpha1.Webhook, webhookView]
	auth     *authenticator
	limiter  *keyedlimit.Limiter
	// unknownLimiter limits requests with tokens not known to be good, per
	// client address (--api-unauthenticated-rate-limit).
	unknownLimiter *keyedlimit.Limiter
	qr             *qr.Renderer
	// sessions seals and opens the console's session cookies
	// (console_session.go).
	sessions *consolesession.Sealer
	locks    *stripedMutex
	now      func() time.Time
}

// newServer builds the server with a random console session key; Setup
// replaces it with --console-session-key-file's.
func newServer(c client.Client, live client.Reader, cachedLinks *fieldindex.Links, o Options) *server {
	sessions, err := consolesession.RandomSealer()
	if err != nil {
		panic(err) // crypto/rand does not fail on supported platforms
	}
	return &server{
		opts:           o,
		client:         c,
		live:           live,
		cachedLinks:    cachedLinks,
		links:          linkResource(),
		linkQuery:      linkquery.New(linkCreatedAt, linkUpdatedAt),
		domains:        domainResource(),
		webhooks:       webhookResource(),
		auth:           newAuthenticator(c, o.TokenAudiences, o.AuthCacheTTL),
		limiter:        newRateLimiter(o.RateLimit),
		unknownLimiter: newRateLimiter(o.UnauthenticatedRateLimit),
		qr:             qr.NewRenderer(o.QRCacheSize),
		sessions:       sessions,
		locks:          newStripedMutex(),
		now:            time.Now,
	}
}

// NeedLeaderElection is false: every replica serves the API.
func (s *server) NeedLeaderElection() bool { return false }

// Start serves until ctx is done, then shuts down gracefully.
func (s *server) Start(ctx context.Context) error {
	log := logf.FromContext(ctx).WithName("restapi")
	ln := s.opts.Listener
	if ln == nil {
		var err error
		if ln, err = net.Listen("tcp", s.opts.BindAddress); err != nil {
			return fmt.Errorf("api server: listen on %s: %w", s.opts.BindAddress, err)
		}
	}
	srv := &http.Server{
		Handler:           s.handler(),
		ReadHeaderTimeout: readHeaderTimeout,
		ReadTimeout:       readTimeout,
		WriteTimeout:      writeTimeout,
		IdleTimeout:       idleTimeout,
		MaxHeaderBytes:    64 << 10,
		BaseContext:       func(net.Listener) context.Context { return logf.IntoContext(context.Background(), log) },
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	log.Info("serving /api/v1", "address", ln.Addr().String())

	select {
	case err := <-errc:
		return fmt.Errorf("api server: %w", err)
	case <-ctx.Done():
	}
	shutdownCtx, cancel := context.WithTimeout(context.Background(), s.opts.ShutdownTimeout)
	defer cancel()
	if err := srv.Shutdown(shutdownCtx); err != nil {
		return fmt.Errorf("api server: shutdown: %w", err)
	}
	if err := <-errc; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("api server: %w", err)
	}
	return nil
}
