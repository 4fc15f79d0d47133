package redirect

import (
	"errors"
	"flag"
	"fmt"
	"net/http"
	"net/netip"
	"os"
	"path/filepath"
	"runtime"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/kurz-dev/kurz/internal/clientip"
	"github.com/kurz-dev/kurz/internal/flagbind"
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
	// ClickFlushInterval is how often counted clicks are written to status.
	ClickFlushInterval time.Duration `flag:"click-flush-interval" usage:"How often counted clicks are written to the Links' status."`
	// ClickFlushQPS bounds the rate of click status writes of this replica.
	ClickFlushQPS float64 `flag:"click-flush-qps" usage:"Maximum click status writes per second of one replica."`
	// TrustedProxies are the networks of the proxies in front of the server
	// (an ingress): when the TCP peer is in one, the visitor's address for
	// password rate limits is the right-most untrusted address of
	// X-Forwarded-For. Empty: the peer is the visitor, X-Forwarded-For is
	// ignored (anyone could forge it).
	TrustedProxies []netip.Prefix
	// ClickSpool is a file where a replica keeps the clicks it cannot write
	// (API server unreachable): from the first flush round that fails until
	// one writes everything, and on shutdown; the next start replays and
	// then removes it. Empty: such clicks are lost on shutdown.
	ClickSpool string `flag:"click-spool" usage:"File where clicks that cannot be written (API server unreachable) are kept, from the first flush that fails and on shutdown, for the next start, which replays them; written only while such clicks are pending. Its directory must be writable and survive restarts (default: none, such clicks are lost on shutdown)."`
	// ClickSpoolSizeLimit is the size limit, in bytes, of the volume the
	// spool is in (the deploy manifests' emptyDir sizeLimit, set from the
	// same number): the spool is kept below half of it (see spoolCap), and
	// the clicks that do not fit are dropped and counted.
	ClickSpoolSizeLimit int64
	// ShutdownTimeout bounds the graceful shutdown of the listener and the
	// final click flush (each).
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
		// An idle keep-alive connection takes 1.4-3.9 KiB (docs/scaling.md),
		// so 50 000 take 70-190 MiB; the Deployment's limit is 1 GiB.
		MaxConns:      50000,
		MaxConnsPerIP: 0,
		// The deploy manifests' emptyDir (config/manager); tens of
		// thousands of pending Links (see spoolCap and docs/reliability.md).
		ClickSpoolSizeLimit: 64 << 20,
	}
}

// BindFlags registers the redirect server's flags on fs.
func (o *Options) BindFlags(fs *flag.FlagSet) {
	flagbind.Fields(fs, o)
	clientip.BindTrustedProxies(fs, &o.TrustedProxies, "redirect-trusted-proxies", "Comma-separated CIDRs of the proxies in front of the redirect server (e.g. the ingress); from those peers the visitor's address is taken from X-Forwarded-For (default: none, the TCP peer is the visitor).")
	fs.Var((*byteSize)(&o.ClickSpoolSizeLimit), "click-spool-size-limit", "Size limit of the volume --click-spool is in (a quantity: 64Mi; the deploy manifests set it from their emptyDir's sizeLimit). The spool stays below half of it, less 16Ki and the .corrupt copies beside it (its atomic rewrite holds two copies for a moment); past that, the clicks of the Links with the fewest pending clicks are dropped and counted in kurz_redirect_clicks_dropped_total.")
}

// Validate reports options that cannot work; every message names the flag.
// It looks at the values only: what --click-spool names on disk is checked
// by Setup (checkSpool), since `kurz dev` validates its flags before it
// creates the data directory the spool lives in.
func (o Options) Validate() error {
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
	if o.ClickSpoolSizeLimit < minSpoolSizeLimit {
		return fmt.Errorf("--click-spool-size-limit must be at least %s, not %d bytes", resource.NewQuantity(minSpoolSizeLimit, resource.BinarySI), o.ClickSpoolSizeLimit)
	}
	return nil
}

// byteSize is a flag of a size in bytes written as a quantity (64Mi, 1G,
// 65536), like a volume's sizeLimit.
type byteSize int64

func (b *byteSize) String() string {
	return resource.NewQuantity(int64(*b), resource.BinarySI).String()
}

func (b *byteSize) Set(s string) error {
	q, err := resource.ParseQuantity(s)
	if err != nil {
		return err
	}
	n, ok := q.AsInt64()
	if !ok {
		return fmt.Errorf("%s is not a whole number of bytes", s)
	}
	*b = byteSize(n)
	return nil
}

// checkSpool refuses a --click-spool whose directory is missing or that is
// itself a directory: the spool is written only when kube-apiserver is
// unreachable, too late to find out.
func (o Options) checkSpool() error {
	if o.ClickSpool == "" {
		return nil
	}
	if st, err := os.Stat(filepath.Dir(o.ClickSpool)); err != nil || !st.IsDir() {
		return fmt.Errorf("--click-spool %s: its directory must exist", o.ClickSpool)
	}
	if st, err := os.Stat(o.ClickSpool); err == nil && st.IsDir() {
		return fmt.Errorf("--click-spool %s is a directory, not a file", o.ClickSpool)
	}
	return nil
}
