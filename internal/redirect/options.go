package redirect

import (
	"errors"
	"flag"
	"fmt"
	"net/http"
	"net/netip"
	"runtime"
	"sync/atomic"
	"time"

	kurzv1alpha1 "github.com/kurz-dev/kurz/api/v1alpha1"
	"github.com/kurz-dev/kurz/internal/analytics/capture"
	"github.com/kurz-dev/kurz/internal/clientip"
	"github.com/kurz-dev/kurz/internal/flagbind"
	"github.com/kurz-dev/kurz/internal/initialevents"
	"github.com/kurz-dev/kurz/internal/redirect/clicks"
)

// Options configure the redirect server.
type Options struct {
	// BindAddress is where the redirect listener listens.
	BindAddress string `flag:"redirect-bind-address" usage:"Address the redirect server listens on."`
	// Status is the code of redirect answers: 301, 302, 307 or 308.
	Status int `flag:"redirect-status" usage:"HTTP status of redirects: 301, 302, 307 or 308."`
	// CookieSecret signs the cookies that remember a typed password. Replicas
	// must share it, or a visitor moved to another replica types the password
	// again. Empty (and no CookieSecretFile): a random per-process key.
	CookieSecret string `flag:"redirect-cookie-secret" usage:"Secret that signs password cookies; share it between replicas (default: a random key per process, so a visitor may have to retype a password on another replica)."`
	// CookieSecretFile holds the cookie secret (e.g. a mounted Secret).
	CookieSecretFile string `flag:"redirect-cookie-secret-file" usage:"File holding the password cookie secret (overrides --redirect-cookie-secret)."`
	// TrustedProxies are the networks of the proxies in front of the server
	// (an ingress): when the TCP peer is in one, the visitor's address for
	// password rate limits is the right-most untrusted address of
	// X-Forwarded-For. Empty: the peer is the visitor, X-Forwarded-For is
	// ignored (anyone could forge it).
	TrustedProxies []netip.Prefix
	// ShutdownTimeout bounds the graceful shutdown of the listener, and
	// then the click consumers' Finish (the final click flush).
	ShutdownTimeout time.Duration `flag:"redirect-shutdown-timeout" usage:"Time allowed to drain connections, and then to flush clicks, on shutdown."`
	// PasswordConcurrency bounds the bcrypt comparisons running at once; an
	// attempt that finds no free slot within a second gets 429.
	PasswordConcurrency int `flag:"redirect-password-concurrency" usage:"Password checks (bcrypt) running at once per replica; an attempt waiting over a second gets 429 (default: half the CPUs, at least 1)."`
	// MaxConns bounds the open connections, idle ones included; past it the listener
	// answers 503 and closes.
	MaxConns int `flag:"redirect-max-conns" usage:"Connections the redirect server holds at once; more are answered 503 and closed."`
	// MaxConnsPerIP bounds the open connections of one TCP peer address; past it
	// the listener answers 429 and closes. Behind an ingress the peer is the
	// ingress: size it for the ingress's connection pool, or 0 (no limit).
	MaxConnsPerIP int `flag:"redirect-max-conns-per-ip" usage:"Connections from one peer address; more are answered 429 and closed (0: no limit; behind an ingress the peer is the ingress)."`
	// Clicks configure the click Writer (the --click-* flags).
	Clicks clicks.Options
	// Analytics is click analytics' capture, set by the composition root
	// (the --analytics flags are package wiring's); zero: off.
	Analytics AnalyticsCapture
	// InitialLinks gives the index the Link informer's first list while
	// it streams (internal/initialevents); nil: the informer's handler
	// gives it every Link. Set by the composition root.
	InitialLinks *initialevents.Feed[*kurzv1alpha1.Link]
}

// AnalyticsCapture is what the redirect server needs of click analytics:
// the ring the handler copies each click into, the consumer that drains it
// (run as a click consumer), and the trusted country header.
type AnalyticsCapture struct {
	Ring *capture.Ring
	// OnDemand, set instead of Ring, is a ring switched at run time: the
	// handler captures into the ring it points to, and captures nothing
	// while it is nil (webhooks' link.clicked without analytics: only
	// while a Webhook wants clicks).
	OnDemand      *atomic.Pointer[capture.Ring]
	Consumer      ClickConsumer
	CountryHeader string
}

// DefaultOptions returns the production defaults.
func DefaultOptions() Options {
	return Options{
		BindAddress:     ":8081",
		Status:          http.StatusFound,
		ShutdownTimeout: 10 * time.Second,
		// Half the CPUs (at least one) check passwords; the rest stay free
		// for redirects whatever the password traffic.
		PasswordConcurrency: max(runtime.GOMAXPROCS(0)/2, 1),
		// An idle keep-alive connection takes 1.4-3.9 KiB (docs/scaling.md),
		// so 50 000 take 70-190 MiB; the Deployment's limit is 1 GiB.
		MaxConns:      50000,
		MaxConnsPerIP: 0,
		Clicks:        clicks.DefaultOptions(),
	}
}

// BindFlags registers the redirect server's flags, the click flags
// included, on fs.
func (o *Options) BindFlags(fs *flag.FlagSet) {
	flagbind.Fields(fs, o)
	o.Clicks.BindFlags(fs)
	clientip.BindTrustedProxies(fs, &o.TrustedProxies, "redirect-trusted-proxies", "Comma-separated CIDRs of the proxies in front of the redirect server (e.g. the ingress); from those peers the visitor's address is taken from X-Forwarded-For (default: none, the TCP peer is the visitor).")
}

// Validate reports every option that cannot work, joined; each message
// names its flag.
func (o Options) Validate() error {
	var errs []error
	switch o.Status {
	case http.StatusMovedPermanently, http.StatusFound, http.StatusTemporaryRedirect, http.StatusPermanentRedirect:
	default:
		errs = append(errs, fmt.Errorf("--redirect-status must be 301, 302, 307 or 308, not %d", o.Status))
	}
	errs = append(errs, o.Clicks.Validate())
	if o.ShutdownTimeout <= 0 {
		errs = append(errs, errors.New("--redirect-shutdown-timeout must be positive"))
	}
	if o.PasswordConcurrency <= 0 {
		errs = append(errs, errors.New("--redirect-password-concurrency must be positive"))
	}
	if o.MaxConns <= 0 {
		errs = append(errs, errors.New("--redirect-max-conns must be positive"))
	}
	if o.MaxConnsPerIP < 0 {
		errs = append(errs, errors.New("--redirect-max-conns-per-ip must not be negative"))
	}
	return errors.Join(errs...)
}
