// Package redirect serves https://<domain>/<key> from an in-memory index fed
// by the informer cache, and counts clicks.
//
// Every replica runs it (no leader election): the index decides on its own,
// with internal/claims, which Domain holds a hostname and which Link holds a
// key, so replicas agree without waiting for the controllers' conditions.
// Clicks are counted in memory and flushed as status patches with an
// optimistic lock, so replicas never lose each other's counts.
//
// A click patch can fail without saying whether the API server applied it (a
// timeout or a dropped connection after the server wrote it). Retrying it
// blindly would count those clicks twice, so the next flush of that Link
// first reads it live: if status.clicks is the value the failed patch set,
// the patch landed and is not repeated. If another replica added clicks in
// between, the value no longer tells: the clicks are written again and may be
// counted twice (or, if that replica happened to set the very same value,
// once too few). With one replica writing a Link the counts stay exact.
//
// Password cookies are HMAC-signed with a key derived from
// --redirect-cookie-secret (or --redirect-cookie-secret-file, e.g. a mounted
// Secret, or else the environment variable KURZ_REDIRECT_COOKIE_SECRET, which
// the deploy manifests fill from an optional Secret). Give every replica the
// same secret: without one, each process makes
// a random key, and a visitor whose next request lands on another replica (or
// comes after a restart) is asked for the password again. The cookie binds the
// link's uid and password hash, so changing the password logs everyone out.
//
// Password attempts are limited per visitor and link (a burst, then one per
// period; IPv6 visitors by their /64) and per link across all visitors. Behind
// an ingress the TCP peer is the ingress: list its networks in
// --redirect-trusted-proxies so the visitor is read from X-Forwarded-For, or
// every visitor shares the ingress's bucket. The bcrypt comparisons are
// bounded (--redirect-password-concurrency slots, 429 after a second's wait)
// and run on lowered-priority threads, so password traffic cannot starve the
// redirects of other links.
package redirect

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"net/netip"
	"os"
	"runtime"
	"strings"
	"time"

	ctrl "sigs.k8s.io/controller-runtime"
)

// Options configure the redirect server.
type Options struct {
	// BindAddress is where the redirect listener listens.
	BindAddress string
	// Status is the code of redirect answers: 301, 302, 307 or 308.
	Status int
	// CookieSecret signs the cookies that remember a typed password. Replicas
	// must share it, or a visitor moved to another replica types the password
	// again. Empty (and no CookieSecretFile): a random per-process key.
	CookieSecret string
	// CookieSecretFile holds the cookie secret (e.g. a mounted Secret).
	CookieSecretFile string
	// ClickFlushInterval is how often counted clicks are written to status.
	ClickFlushInterval time.Duration
	// ClickFlushQPS bounds the rate of click status writes of this replica.
	ClickFlushQPS float64
	// TrustedProxies are the networks of the proxies in front of the server
	// (an ingress): when the TCP peer is in one, the visitor's address for
	// password rate limits is the right-most untrusted address of
	// X-Forwarded-For. Empty: the peer is the visitor, X-Forwarded-For is
	// ignored (anyone could forge it).
	TrustedProxies []netip.Prefix
	// ShutdownTimeout bounds the graceful shutdown of the listener and the
	// final click flush (each).
	ShutdownTimeout time.Duration
	// PasswordConcurrency bounds the bcrypt comparisons running at once; an
	// attempt that finds no free slot within a second gets 429.
	PasswordConcurrency int
	// MaxConns bounds the connections served at once; past it fasthttp
	// answers 503 and closes.
	MaxConns int
	// MaxConnsPerIP bounds the connections from one TCP peer address; past it
	// fasthttp answers 429 and closes. Behind an ingress the peer is the
	// ingress: size it for the ingress's connection pool, or 0 (no limit).
	MaxConnsPerIP int
}

// DefaultOptions returns the production defaults.
func DefaultOptions() Options {
	return Options{
		BindAddress:        ":8081",
		Status:             http.StatusFound,
		ClickFlushInterval: 10 * time.Second,
		ClickFlushQPS:      50,
		ShutdownTimeout:    10 * time.Second,
		// Half the CPUs (at least one) check passwords; the rest stay free
		// for redirects whatever the password traffic.
		PasswordConcurrency: max(runtime.GOMAXPROCS(0)/2, 1),
		// 20 000 idle keep-alive connections take about 100 MiB (see the
		// README); the Deployment's limit is 1 GiB.
		MaxConns:      50000,
		MaxConnsPerIP: 0,
	}
}

// BindFlags registers the redirect server's flags on fs.
func (o *Options) BindFlags(fs *flag.FlagSet) {
	fs.StringVar(&o.BindAddress, "redirect-bind-address", o.BindAddress, "Address the redirect server listens on.")
	fs.IntVar(&o.Status, "redirect-status", o.Status, "HTTP status of redirects: 301, 302, 307 or 308.")
	fs.StringVar(&o.CookieSecret, "redirect-cookie-secret", o.CookieSecret, "Secret that signs password cookies; share it between replicas (default: a random key per process, so a visitor may have to retype a password on another replica).")
	fs.StringVar(&o.CookieSecretFile, "redirect-cookie-secret-file", o.CookieSecretFile, "File holding the password cookie secret (overrides --redirect-cookie-secret).")
	fs.DurationVar(&o.ClickFlushInterval, "click-flush-interval", o.ClickFlushInterval, "How often counted clicks are written to the Links' status.")
	fs.Float64Var(&o.ClickFlushQPS, "click-flush-qps", o.ClickFlushQPS, "Maximum click status writes per second of one replica.")
	fs.Func("redirect-trusted-proxies", "Comma-separated CIDRs of the proxies in front of the redirect server (e.g. the ingress); from those peers the visitor's address is taken from X-Forwarded-For (default: none, the TCP peer is the visitor).", func(s string) error {
		p, err := ParseTrustedProxies(s)
		o.TrustedProxies = p
		return err
	})
	fs.DurationVar(&o.ShutdownTimeout, "redirect-shutdown-timeout", o.ShutdownTimeout, "Time allowed to drain connections, and then to flush clicks, on shutdown.")
	fs.IntVar(&o.PasswordConcurrency, "redirect-password-concurrency", o.PasswordConcurrency, "Password checks (bcrypt) running at once per replica; an attempt waiting over a second gets 429 (default: half the CPUs, at least 1).")
	fs.IntVar(&o.MaxConns, "redirect-max-conns", o.MaxConns, "Connections the redirect server holds at once; more are answered 503 and closed.")
	fs.IntVar(&o.MaxConnsPerIP, "redirect-max-conns-per-ip", o.MaxConnsPerIP, "Connections from one peer address; more are answered 429 and closed (0: no limit; behind an ingress the peer is the ingress).")
}

// Validate reports options that cannot work.
func (o *Options) Validate() error {
	switch o.Status {
	case http.StatusMovedPermanently, http.StatusFound, http.StatusTemporaryRedirect, http.StatusPermanentRedirect:
	default:
		return fmt.Errorf("--redirect-status must be 301, 302, 307 or 308, not %d", o.Status)
	}
	if o.ClickFlushInterval <= 0 {
		return errors.New("--click-flush-interval must be positive")
	}
	if o.ClickFlushQPS <= 0 {
		return errors.New("--click-flush-qps must be positive")
	}
	if o.ShutdownTimeout <= 0 {
		return errors.New("--redirect-shutdown-timeout must be positive")
	}
	if o.PasswordConcurrency <= 0 {
		return errors.New("--redirect-password-concurrency must be positive")
	}
	if o.MaxConns <= 0 {
		return errors.New("--redirect-max-conns must be positive")
	}
	if o.MaxConnsPerIP < 0 {
		return errors.New("--redirect-max-conns-per-ip must not be negative")
	}
	return nil
}

// CookieSecretEnv is read when neither cookie flag is given. An environment
// variable keeps the secret out of the process's command line, and the
// deploy manifests can fill it from a Secret that may not exist yet.
const CookieSecretEnv = "KURZ_REDIRECT_COOKIE_SECRET"

// cookieKey derives the HMAC key for password cookies from the configured
// secret, or makes a random one for this process.
func (o *Options) cookieKey() ([]byte, error) {
	secret := o.CookieSecret
	if o.CookieSecretFile != "" {
		b, err := os.ReadFile(o.CookieSecretFile)
		if err != nil {
			return nil, fmt.Errorf("read --redirect-cookie-secret-file: %w", err)
		}
		secret = strings.TrimSpace(string(b))
		if secret == "" {
			return nil, errors.New("--redirect-cookie-secret-file is empty")
		}
	}
	if secret == "" {
		secret = strings.TrimSpace(os.Getenv(CookieSecretEnv))
	}
	if secret == "" {
		key := make([]byte, 32)
		if _, err := rand.Read(key); err != nil {
			return nil, fmt.Errorf("random cookie key: %w", err)
		}
		return key, nil
	}
	// Hash with a purpose prefix so the secret is never used raw and could be
	// shared with another use without the keys colliding.
	sum := sha256.Sum256([]byte("kurz redirect password cookie\x00" + secret))
	return sum[:], nil
}

// Setup adds the redirect server to mgr. It runs on every replica.
func Setup(mgr ctrl.Manager, o Options) error {
	_, err := setup(mgr, o)
	return err
}

func setup(mgr ctrl.Manager, o Options) (*Server, error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	registerMetrics()
	ix := NewIndex()
	// Setup has no context of its own; before the manager starts, GetInformer
	// only registers the informer, it does not block.
	regs, err := ix.watch(context.Background(), mgr.GetCache())
	if err != nil {
		return nil, err
	}
	srv, err := NewServer(o, ix)
	if err != nil {
		return nil, err
	}
	srv.flusher = newFlusher(ix.clicks, mgr.GetClient(), mgr.GetAPIReader(), o.ClickFlushQPS)
	srv.synced = regs
	if err := mgr.AddReadyzCheck("redirect-index", func(*http.Request) error {
		if !srv.Synced() {
			return errors.New("redirect index not synced yet")
		}
		return nil
	}); err != nil {
		return nil, fmt.Errorf("add redirect readiness check: %w", err)
	}
	if err := mgr.Add(srv); err != nil {
		return nil, fmt.Errorf("add redirect server: %w", err)
	}
	return srv, nil
}
