package controllers

import (
	"errors"
	"flag"
	"fmt"
	"time"

	"github.com/kurz-dev/kurz/internal/dns"
	"github.com/kurz-dev/kurz/internal/flagbind"
	"github.com/kurz-dev/kurz/internal/webhooks"
)

// Options configure the controllers.
type Options struct {
	// DNS configures the verifier: server, redirect targets, timeout and
	// the checks allowed at once per zone (--dns-zone-checks, which must
	// be below DomainWorkers unless that is 1).
	DNS dns.Options
	// DNSRecheckInterval is how often an Active domain is checked again.
	DNSRecheckInterval time.Duration `flag:"dns-recheck-interval" usage:"How often an Active domain's DNS records are checked again."`
	// PendingBackoff and PendingBackoffMax bound how often a Pending domain
	// is checked: the wait doubles from PendingBackoff up to
	// PendingBackoffMax.
	PendingBackoff    time.Duration `flag:"dns-pending-backoff" usage:"First wait before a Pending domain is checked again; it doubles up to --dns-pending-backoff-max."`
	PendingBackoffMax time.Duration `flag:"dns-pending-backoff-max" usage:"Longest wait between checks of a Pending domain."`

	// LinkWorkers and DomainWorkers are how many objects of each kind are
	// reconciled at once. A Link reconcile mostly waits for its status
	// patch, so a bulk import settles about twice as fast with 16 workers
	// as with 4 (make bench-scale, docs/scaling.md).
	LinkWorkers   int `flag:"link-workers" usage:"How many Links are reconciled at once."`
	DomainWorkers int `flag:"domain-workers" usage:"How many Domains are reconciled at once (each may wait on DNS up to --dns-timeout)."`

	// Routes is where the routing objects of verified Domains live and
	// how long they outlive the Domain's Active phase, whichever way.
	Routes RouteOptions
	// Ingress configures the Ingresses kept for verified Domains.
	Ingress IngressOptions
	// Gateway configures the Gateway API's objects kept for verified
	// Domains instead of Ingresses.
	Gateway GatewayOptions
	// Events receives the change events webhooks deliver (the manager's
	// webhooks.Dispatcher); nil: the controllers emit none. Not a flag.
	Events webhooks.Emitter
	// WebhookURLs decides about Webhooks' URLs; nil: the Webhook
	// controller does not run (webhook delivery is off). Not a flag.
	WebhookURLs *webhooks.Checker
	// CertManager: cert-manager's Certificate kind is installed and cached,
	// so the route controllers read Certificates. Not a flag: whoever
	// builds the cache sets it from CacheByObject's answer.
	CertManager bool
}

// DefaultOptions returns the production defaults.
func DefaultOptions() Options {
	return Options{
		DNSRecheckInterval: time.Hour,
		PendingBackoff:     30 * time.Second,
		PendingBackoffMax:  10 * time.Minute,
		DNS:                dns.DefaultOptions(),
		LinkWorkers:        16,
		DomainWorkers:      2,
		Routes:             DefaultRouteOptions(),
		Ingress:            DefaultIngressOptions(),
		Gateway:            DefaultGatewayOptions(),
	}
}

// BindFlags registers the controllers' flags on fs, with o's values as
// defaults.
func (o *Options) BindFlags(fs *flag.FlagSet) {
	o.DNS.BindFlags(fs)
	flagbind.Fields(fs, o)
	o.Routes.BindFlags(fs)
	o.Ingress.BindFlags(fs)
	o.Gateway.BindFlags(fs)
}

// Validate rejects options the controllers cannot run with; every message
// names the flag.
func (o Options) Validate() error {
	var errs []error
	if o.DNSRecheckInterval <= 0 {
		errs = append(errs, fmt.Errorf("--dns-recheck-interval must be positive, got %s", o.DNSRecheckInterval))
	}
	if o.PendingBackoff <= 0 || o.PendingBackoffMax < o.PendingBackoff {
		errs = append(errs, fmt.Errorf("--dns-pending-backoff (%s) must be positive and at most --dns-pending-backoff-max (%s)", o.PendingBackoff, o.PendingBackoffMax))
	}
	if o.LinkWorkers < 1 || o.DomainWorkers < 1 {
		errs = append(errs, fmt.Errorf("--link-workers (%d) and --domain-workers (%d) must be at least 1", o.LinkWorkers, o.DomainWorkers))
	}
	if z := o.DNS.ZoneConcurrency; z < 1 || z > max(o.DomainWorkers-1, 1) {
		errs = append(errs, fmt.Errorf("--dns-zone-checks (%d) must be at least 1 and below --domain-workers (%d)", z, o.DomainWorkers))
	}
	return errors.Join(append(errs, o.DNS.Validate(), o.Routes.validate(o.Routing()), o.Ingress.Validate(), o.Gateway.validate(o.Ingress))...)
}

// Routing reports whether kurz keeps routes for verified Domains
// (Ingresses or the Gateway API's objects).
func (o Options) Routing() bool { return o.Ingress.Class != "" || o.Gateway.Enabled() }
