package webhooks

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"strings"
	"time"

	kurzv1alpha1 "github.com/kurz-dev/kurz/api/v1alpha1"
)

// Checker tells the Webhook controller whether kurz can deliver to a
// Webhook's URL: the rules the dialer applies when it connects, applied to
// what DNS answers now, so a refused URL makes the Webhook Stalled before
// any event is sent. The dialer checks again at every connection (DNS may
// answer otherwise by then).
type Checker struct {
	o        Options
	resolver *net.Resolver
}

// NewChecker returns a Checker for o (delivery's options).
func NewChecker(o Options) *Checker { return &Checker{o: o, resolver: o.resolver()} }

// URLCheck is what Check found.
type URLCheck struct {
	// Host is the URL's host.
	Host string
	// Refused says why kurz will not deliver to the URL; empty when it
	// will.
	Refused string
	// Unresolved: DNS gave no answer (no such host, or a failure), so
	// nothing was decided about the addresses; deliveries will tell.
	Unresolved bool
	// ByDNS: the refusal comes from what DNS answered, which may change.
	ByDNS bool
}

// lookupTimeout bounds Check's DNS lookup.
const lookupTimeout = 5 * time.Second

// Check decides about w's URL.
func (c *Checker) Check(ctx context.Context, w *kurzv1alpha1.Webhook) URLCheck {
	t := c.o.targetOf(w.Spec.URL, w.Namespace)
	r := URLCheck{Host: t.host, Refused: t.refused}
	if r.Refused != "" {
		return r
	}
	if _, err := netip.ParseAddr(t.host); err == nil {
		return r // an address literal: targetOf checked it
	}
	ctx, cancel := context.WithTimeout(ctx, lookupTimeout)
	defer cancel()
	addrs, err := c.resolver.LookupNetIP(ctx, "ip", t.host)
	if err != nil || len(addrs) == 0 {
		r.Unresolved = true
		return r
	}
	// Refused when every address is: the dialer skips refused addresses,
	// so one allowed address is enough to deliver.
	var refusals []string
	for _, a := range addrs {
		err := t.policy.check(a)
		var re *RefusedError
		if !errors.As(err, &re) {
			return r
		}
		refusals = append(refusals, re.Addr.String()+" ("+re.Kind+")")
	}
	r.Refused = refusedPrefix + t.host + " resolves to " + strings.Join(refusals, ", ")
	r.ByDNS = true
	return r
}

// IsRefusal reports whether a status.lastError says the address was
// refused when kurz connected.
func IsRefusal(lastError string) bool { return strings.HasPrefix(lastError, refusedPrefix) }

// IsGone reports whether a status.lastError is a 410 Gone answer.
func IsGone(lastError string) bool { return strings.HasPrefix(lastError, "HTTP 410") }
