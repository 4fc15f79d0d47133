package dns

import (
	"errors"
	"flag"
	"fmt"
	"net"
	"strings"
	"time"

	"github.com/kurz-dev/kurz/internal/flagbind"
)

// Options configure a Verifier. They start from DefaultOptions: New fills
// nothing in.
type Options struct {
	// Server is the DNS server as host:port; empty means the system
	// resolver.
	Server string `flag:"dns-server" usage:"DNS server (host:port) to verify domains against; empty uses the system resolver."`
	// Targets are the redirect targets (hostnames or IPs) a domain may
	// point at instead of publishing the TXT record.
	Targets []string
	// Timeout bounds one verification (all its lookups).
	Timeout time.Duration `flag:"dns-timeout" usage:"Longest time one domain check (all its DNS lookups) may take."`
	// ZoneConcurrency bounds the verifications running at once for
	// hostnames under one registrable domain (see Zone); a verification
	// past it fails at once with ErrZoneBusy. Zero means no bound (the
	// flag does not allow it; the controllers check it against their
	// workers).
	ZoneConcurrency int `flag:"dns-zone-checks" usage:"How many DNS checks may run at once for hostnames of one registrable domain (below --domain-workers), so a slow zone cannot hold every Domain worker."`
}

// DefaultOptions returns the production defaults.
func DefaultOptions() Options {
	return Options{Timeout: 10 * time.Second, ZoneConcurrency: 1}
}

// BindFlags registers the verifier's flags on fs, with o's values as
// defaults.
func (o *Options) BindFlags(fs *flag.FlagSet) {
	flagbind.Fields(fs, o)
	fs.Func("redirect-target", "A hostname or IP the redirect server is reached at; a domain pointing there (CNAME, A or AAAA) is verified without a TXT record. Repeatable.", func(s string) error {
		for _, t := range strings.Split(s, ",") {
			if t = strings.TrimSpace(t); t != "" {
				o.Targets = append(o.Targets, t)
			}
		}
		return nil
	})
}

// Validate rejects options New cannot build a Verifier from; every message
// names the flag.
func (o Options) Validate() error {
	var errs []error
	if o.Server != "" {
		if _, _, err := net.SplitHostPort(o.Server); err != nil {
			errs = append(errs, fmt.Errorf("--dns-server %q: want host:port: %w", o.Server, err))
		}
	}
	if _, err := ParseTargets(o.Targets); err != nil {
		errs = append(errs, fmt.Errorf("--redirect-target: %w", err))
	}
	if o.Timeout <= 0 {
		errs = append(errs, fmt.Errorf("--dns-timeout must be positive, got %s", o.Timeout))
	}
	if o.ZoneConcurrency < 0 {
		errs = append(errs, fmt.Errorf("--dns-zone-checks must not be negative, got %d", o.ZoneConcurrency))
	}
	return errors.Join(errs...)
}
