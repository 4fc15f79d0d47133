package dns

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"time"

	kurzv1alpha1 "github.com/kurz-dev/kurz/api/v1alpha1"
)

// Method says how a domain was proven.
type Method string

const (
	// MethodNone: nothing proves the domain.
	MethodNone Method = ""
	// MethodTXT: the challenge TXT record holds the token.
	MethodTXT Method = "TXT"
	// MethodCNAME: the domain is an alias of a redirect target hostname.
	MethodCNAME Method = "CNAME"
	// MethodAddress: an A or AAAA record of the domain is an address of a
	// redirect target.
	MethodAddress Method = "Address"
)

// Result is the outcome of one verification.
type Result struct {
	// Method is how the domain was proven; MethodNone when it was not.
	Method Method
	// Target is the redirect target matched by MethodCNAME or
	// MethodAddress.
	Target string
	// TXTAbsent is true when the TXT lookup answered definitively that the
	// record does not hold the token (NXDOMAIN, no TXT record, other
	// values); false when it holds it or the lookup failed.
	TXTAbsent bool
}

// Verified reports whether DNS proves the domain.
func (r Result) Verified() bool { return r.Method != MethodNone }

// Verifier checks domains against DNS. It is safe for concurrent use.
type Verifier struct {
	resolver *net.Resolver
	targets  Targets
	timeout  time.Duration
	zones    *zoneLimit
}

// New returns a Verifier, or the error of o.Validate.
func New(o Options) (*Verifier, error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	targets, err := ParseTargets(o.Targets)
	if err != nil {
		return nil, err
	}
	v := &Verifier{resolver: net.DefaultResolver, targets: targets, timeout: o.Timeout, zones: newZoneLimit(o.ZoneConcurrency)}
	if o.Server != "" {
		server := o.Server
		v.resolver = &net.Resolver{
			PreferGo: true,
			// Every query goes to the configured server, whatever
			// /etc/resolv.conf lists; network is udp, or tcp when a UDP
			// answer was truncated.
			Dial: func(ctx context.Context, network, _ string) (net.Conn, error) {
				var d net.Dialer
				return d.DialContext(ctx, network, server)
			},
		}
	}
	return v, nil
}

// Verify reports whether DNS proves domain with token. The TXT record is
// tried first, then the redirect targets. A lookup that found nothing is not
// an error; a failed lookup (timeout, server failure) is, unless another
// method proved the domain anyway, so a flaky server cannot demote a domain
// by accident: the caller keeps its last answer on error. When the domain's
// zone already has ZoneConcurrency verifications running it returns
// ErrZoneBusy without asking DNS.
func (v *Verifier) Verify(ctx context.Context, domain, token string) (Result, error) {
	release, ok := v.zones.acquire(Zone(domain))
	if !ok {
		return Result{}, ErrZoneBusy
	}
	defer release()
	ctx, cancel := context.WithTimeout(ctx, v.timeout)
	defer cancel()
	// A trailing dot makes names absolute, so the resolver never appends
	// search domains and asks only what we mean.
	fqdn := strings.TrimSuffix(domain, ".") + "."

	var errs []error
	found, err := v.checkTXT(ctx, kurzv1alpha1.ChallengeRecordPrefix+fqdn, token)
	if found {
		return Result{Method: MethodTXT}, nil
	}
	errs = append(errs, err)
	absent := err == nil
	if v.targets.Empty() {
		return Result{TXTAbsent: absent}, errors.Join(errs...)
	}

	cname, err := v.resolver.LookupCNAME(ctx, fqdn)
	if err == nil {
		if t, ok := v.targets.MatchHost(cname); ok && !sameName(cname, fqdn) {
			return Result{Method: MethodCNAME, Target: t, TXTAbsent: absent}, nil
		}
	} else if !isNotFound(err) {
		errs = append(errs, fmt.Errorf("look up CNAME of %s: %w", domain, err))
	}

	addrs, err := v.resolver.LookupNetIP(ctx, "ip", fqdn)
	if err != nil {
		if !isNotFound(err) {
			errs = append(errs, fmt.Errorf("look up addresses of %s: %w", domain, err))
		}
		return Result{TXTAbsent: absent}, errors.Join(errs...)
	}
	targetAddrs := v.targets.Addresses(ctx, v.resolver)
	for _, a := range addrs {
		if t, ok := targetAddrs[a.Unmap()]; ok {
			return Result{Method: MethodAddress, Target: t, TXTAbsent: absent}, nil
		}
	}
	return Result{TXTAbsent: absent}, errors.Join(errs...)
}

// checkTXT reports whether a TXT record at name holds token exactly.
func (v *Verifier) checkTXT(ctx context.Context, name, token string) (bool, error) {
	if token == "" {
		return false, nil
	}
	records, err := v.resolver.LookupTXT(ctx, name)
	if err != nil {
		if isNotFound(err) {
			return false, nil
		}
		return false, fmt.Errorf("look up TXT %s: %w", strings.TrimSuffix(name, "."), err)
	}
	for _, r := range records {
		if strings.TrimSpace(r) == token {
			return true, nil
		}
	}
	return false, nil
}

// isNotFound reports whether err says the name or record does not exist
// (NXDOMAIN or no data), which is an answer, not a failure.
func isNotFound(err error) bool {
	var de *net.DNSError
	return errors.As(err, &de) && de.IsNotFound
}
