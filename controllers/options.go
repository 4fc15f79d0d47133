package controllers

import (
	"errors"
	"flag"
	"fmt"
	"strings"
	"time"
)

// Options configure the controllers.
type Options struct {
	// DNSServer is the DNS server (host:port) domains are verified
	// against; empty means the system resolver.
	DNSServer string
	// RedirectTargets are the hostnames or IPs a domain may point at
	// (CNAME, A or AAAA) instead of publishing its TXT record.
	RedirectTargets []string
	// DNSRecheckInterval is how often an Active domain is checked again.
	DNSRecheckInterval time.Duration
	// PendingBackoff and PendingBackoffMax bound how often a Pending domain
	// is checked: the wait doubles from PendingBackoff up to
	// PendingBackoffMax.
	PendingBackoff    time.Duration
	PendingBackoffMax time.Duration
	// DNSTimeout bounds one domain check (all its lookups).
	DNSTimeout time.Duration
	// DNSZoneChecks bounds the checks running at once for hostnames of one
	// registrable domain, so a zone that never answers holds at most that
	// many Domain workers and the others keep verifying every other zone.
	// It must be below DomainWorkers (unless DomainWorkers is 1).
	DNSZoneChecks int

	// LinkWorkers and DomainWorkers are how many objects of each kind are
	// reconciled at once. A Link reconcile mostly waits for its status
	// patch, so a bulk import settles about twice as fast with 16 workers
	// as with 4 (make bench-scale, README "How it scales").
	LinkWorkers   int
	DomainWorkers int

	// Ingress configures the Ingresses kept for verified Domains, and the
	// namespace and grace period of the Gateway API's objects too.
	Ingress IngressOptions
	// Gateway configures the Gateway API's objects kept for verified
	// Domains instead of Ingresses.
	Gateway GatewayOptions
	// certificates: cert-manager's Certificate CRD was found when the cache
	// was configured (CacheByObject), so the Ingress controller reads
	// Certificates.
	certificates bool
}

// DefaultOptions returns the production defaults.
func DefaultOptions() Options {
	return Options{
		DNSRecheckInterval: time.Hour,
		PendingBackoff:     30 * time.Second,
		PendingBackoffMax:  10 * time.Minute,
		DNSTimeout:         10 * time.Second,
		DNSZoneChecks:      1,
		LinkWorkers:        16,
		DomainWorkers:      2,
		Ingress:            defaultIngressOptions(),
		Gateway:            defaultGatewayOptions(),
	}
}

// BindFlags registers the controllers' flags on fs, with o's values as
// defaults.
func (o *Options) BindFlags(fs *flag.FlagSet) {
	fs.StringVar(&o.DNSServer, "dns-server", o.DNSServer, "DNS server (host:port) to verify domains against; empty uses the system resolver.")
	fs.Func("redirect-target", "A hostname or IP the redirect server is reached at; a domain pointing there (CNAME, A or AAAA) is verified without a TXT record. Repeatable.", func(s string) error {
		for _, t := range strings.Split(s, ",") {
			if t = strings.TrimSpace(t); t != "" {
				o.RedirectTargets = append(o.RedirectTargets, t)
			}
		}
		return nil
	})
	fs.DurationVar(&o.DNSRecheckInterval, "dns-recheck-interval", o.DNSRecheckInterval, "How often an Active domain's DNS records are checked again.")
	fs.DurationVar(&o.PendingBackoff, "dns-pending-backoff", o.PendingBackoff, "First wait before a Pending domain is checked again; it doubles up to --dns-pending-backoff-max.")
	fs.DurationVar(&o.PendingBackoffMax, "dns-pending-backoff-max", o.PendingBackoffMax, "Longest wait between checks of a Pending domain.")
	fs.DurationVar(&o.DNSTimeout, "dns-timeout", o.DNSTimeout, "Longest time one domain check (all its DNS lookups) may take.")
	fs.IntVar(&o.DNSZoneChecks, "dns-zone-checks", o.DNSZoneChecks, "How many DNS checks may run at once for hostnames of one registrable domain (below --domain-workers), so a slow zone cannot hold every Domain worker.")
	fs.IntVar(&o.LinkWorkers, "link-workers", o.LinkWorkers, "How many Links are reconciled at once.")
	fs.IntVar(&o.DomainWorkers, "domain-workers", o.DomainWorkers, "How many Domains are reconciled at once (each may wait on DNS up to --dns-timeout).")
	o.Ingress.bindFlags(fs)
	o.Gateway.bindFlags(fs)
}

// Validate rejects options the controllers cannot run with.
func (o Options) Validate() error {
	if o.DNSRecheckInterval <= 0 {
		return fmt.Errorf("dns-recheck-interval must be positive, got %s", o.DNSRecheckInterval)
	}
	if o.PendingBackoff <= 0 || o.PendingBackoffMax < o.PendingBackoff {
		return fmt.Errorf("dns-pending-backoff (%s) must be positive and at most dns-pending-backoff-max (%s)", o.PendingBackoff, o.PendingBackoffMax)
	}
	if o.DNSTimeout <= 0 {
		return fmt.Errorf("dns-timeout must be positive, got %s", o.DNSTimeout)
	}
	if o.LinkWorkers < 1 || o.DomainWorkers < 1 {
		return fmt.Errorf("link-workers (%d) and domain-workers (%d) must be at least 1", o.LinkWorkers, o.DomainWorkers)
	}
	if o.DNSZoneChecks < 1 || o.DNSZoneChecks > max(o.DomainWorkers-1, 1) {
		return fmt.Errorf("dns-zone-checks (%d) must be at least 1 and below domain-workers (%d)", o.DNSZoneChecks, o.DomainWorkers)
	}
	return errors.Join(o.Ingress.validate(), o.Gateway.validate(o.Ingress))
}

// Routing reports whether kurz keeps routes for verified Domains
// (Ingresses or the Gateway API's objects).
func (o Options) Routing() bool { return o.Ingress.Class != "" || o.Gateway.Enabled() }
