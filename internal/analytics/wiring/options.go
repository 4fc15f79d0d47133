package wiring

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/kurz-dev/kurz/internal/analytics/capture"
	"github.com/kurz-dev/kurz/internal/analytics/geoip"
	"github.com/kurz-dev/kurz/internal/analytics/otlp"
	"github.com/kurz-dev/kurz/internal/analytics/postgres"
	"github.com/kurz-dev/kurz/internal/analytics/sqlite"
	"github.com/kurz-dev/kurz/internal/flagbind"
)

// Options are click analytics' flags.
type Options struct {
	// Enabled turns analytics on; see Complete for its default.
	Enabled bool
	// enabledSet records that --analytics was given.
	enabledSet bool
	// Store is where the analytics live: a SQLite file, or a PostgreSQL
	// URL (it holds a password: never logged, see storeName).
	Store string `flag:"analytics-store" usage:"Where click analytics are stored: a SQLite file path (one process runs every role: kurz dev, a single replica) or a PostgreSQL URL postgres://user:password@host/db?sslmode=... (many replicas); default: the environment variable KURZ_ANALYTICS_STORE (keeps the URL's password out of the process's arguments). Giving it turns --analytics on."`
	// CountryHeader is a request header a trusted proxy in front of the
	// redirect server sets to the visitor's ISO 3166-1 country (CF-IPCountry).
	CountryHeader string `flag:"analytics-country-header" usage:"Request header holding the visitor's two-letter country, set by a proxy you trust (e.g. CF-IPCountry); default: none, countries are unknown."`
	// SaltNamespace is where the Secret with the visitor salts lives.
	SaltNamespace string `flag:"analytics-salt-namespace" usage:"Namespace of the Secret kurz-analytics-salt holding the daily visitor salts (default: the pod's namespace)."`
	// SQLite are the store's retention flags; its Path is Store.
	SQLite sqlite.Options
	// OTLP is the export of the aggregated batches (--analytics-otlp-*),
	// alongside or instead of a store.
	OTLP otlp.Options
	// GeoIP is the country lookup from a .mmdb file (--geoip-*).
	GeoIP geoip.Options
	// Capture sizes the ring and the writer (not flags).
	Capture capture.Options
}

// DefaultOptions are `kurz manager`'s: analytics off unless a store is
// given.
func DefaultOptions() Options {
	return Options{SQLite: sqlite.DefaultOptions(), Capture: capture.DefaultOptions(), OTLP: otlp.DefaultOptions(), GeoIP: geoip.DefaultOptions()}
}

// BindFlags registers --analytics and the --analytics-* flags.
func (o *Options) BindFlags(fs *flag.FlagSet) {
	fs.Var(toggle{o}, "analytics", "Capture click analytics (device, browser, OS, referrer, country, city, UTM, daily visitors) into --analytics-store (default: on in kurz dev, in its data dir; for kurz manager on when --analytics-store is given).")
	flagbind.Fields(fs, o)
	o.SQLite.BindFlags(fs)
	o.OTLP.BindFlags(fs)
	o.GeoIP.BindFlags(fs)
}

// toggle is --analytics: a bool that remembers it was given, so that a
// store given alone turns analytics on and --analytics=false still wins.
type toggle struct{ o *Options }

func (t toggle) String() string {
	if t.o == nil {
		return "false"
	}
	return strconv.FormatBool(t.o.Enabled)
}

func (t toggle) Set(s string) error {
	v, err := strconv.ParseBool(s)
	if err != nil {
		return err
	}
	t.o.Enabled, t.o.enabledSet = v, true
	return nil
}

func (toggle) IsBoolFlag() bool { return true }

// StoreEnv is the environment variable --analytics-store defaults to: the
// chart sets it from a Secret, so the PostgreSQL URL's password is not in
// the Pod spec's args nor in the process's command line.
const StoreEnv = "KURZ_ANALYTICS_STORE"

// Complete derives what follows from the flags given: the store comes from
// StoreEnv when --analytics-store was not given, and a store or an OTLP
// endpoint turns analytics on unless --analytics=false was given.
func (o *Options) Complete() {
	if o.Store == "" {
		o.Store = os.Getenv(StoreEnv)
	}
	if (o.Store != "" || o.OTLP.Endpoint != "") && !o.enabledSet {
		o.Enabled = true
	}
	o.SQLite.Path = o.Store
}

// SetDefaultEnabled makes analytics on by default (kurz dev), with store as
// the default store; flags given still win.
func (o *Options) SetDefaultEnabled(store string) {
	if !o.enabledSet {
		o.Enabled = true
	}
	if o.Store == "" {
		o.Store = store
	}
}

// Validate reports every option that cannot work, naming its flag. Off,
// nothing else is checked.
func (o Options) Validate() error {
	if !o.Enabled {
		return nil
	}
	var errs []error
	switch {
	case o.Store == "" && o.OTLP.Endpoint != "":
		// Export only: nothing to store, the analytics API answers 503.
	case o.Store == "":
		errs = append(errs, errors.New("--analytics needs --analytics-store (a SQLite file path or a postgres:// URL; or "+StoreEnv+") or --analytics-otlp-endpoint"))
	case postgres.IsURL(o.Store):
		errs = append(errs, o.postgresOptions().Validate())
	case strings.Contains(o.Store, "://"):
		// Not repeated: a URL may hold a password.
		scheme, _, _ := strings.Cut(o.Store, "://")
		errs = append(errs, fmt.Errorf("--analytics-store: a %q URL is not a store; give a SQLite file path or a postgres:// (postgresql://) URL", scheme))
	default:
		if fi, err := os.Stat(o.Store); err == nil && fi.IsDir() {
			errs = append(errs, fmt.Errorf("--analytics-store %q is a directory, not a file", o.Store))
		}
		so := o.SQLite
		so.Path = o.Store
		errs = append(errs, so.Validate())
	}
	if o.OTLP.Endpoint != "" {
		oo := o.OTLP
		if err := oo.HeadersFromEnv(); err != nil {
			errs = append(errs, err)
		}
		errs = append(errs, oo.Validate())
	}
	if o.GeoIP.Database != "" {
		errs = append(errs, o.GeoIP.Validate())
		if fi, err := os.Stat(o.GeoIP.Database); err != nil {
			errs = append(errs, fmt.Errorf("--geoip-database: %w", err))
		} else if fi.IsDir() {
			errs = append(errs, fmt.Errorf("--geoip-database %q is a directory, not a .mmdb file", o.GeoIP.Database))
		}
	}
	if h := o.CountryHeader; h != "" && !validHeaderName(h) {
		errs = append(errs, fmt.Errorf("--analytics-country-header %q is not an HTTP header name", h))
	}
	return errors.Join(errs...)
}

// postgresOptions are the PostgreSQL store's options: the URL and the
// retention flags the stores share.
func (o Options) postgresOptions() postgres.Options {
	po := postgres.DefaultOptions()
	po.URL = o.Store
	po.Retention, po.RollupRetention, po.DeleteGrace = o.SQLite.Retention, o.SQLite.RollupRetention, o.SQLite.DeleteGrace
	return po
}

// storeName is the store for messages: a PostgreSQL URL without its
// password.
func (o Options) storeName() string {
	if postgres.IsURL(o.Store) {
		return postgres.Redacted(o.Store)
	}
	if strings.Contains(o.Store, "://") {
		return "(a URL)"
	}
	return o.Store
}

func validHeaderName(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}
