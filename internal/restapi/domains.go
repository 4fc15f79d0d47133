package restapi

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation"

	kurzv1alpha1 "github.com/kurz-dev/kurz/api/v1alpha1"
	"github.com/kurz-dev/kurz/internal/claims"
	"github.com/kurz-dev/kurz/internal/timestamps"
	kurzvalidation "github.com/kurz-dev/kurz/internal/validation"
)

const (
	domainsPath      = "/api/v1/domains"
	msgDomainDeleted = "Domain deleted successfully."
)

// domainInput is a validated domain body: domain required, the two URLs
// optional (absent keeps, null clears, a value sets).
type domainInput struct {
	domain                  string
	notFoundURL, expiredURL optional[string]
}

func decodeDomainInput(raw map[string]json.RawMessage) (domainInput, error) {
	f := &form{raw: raw}
	var in domainInput
	if d, ok := f.required("domain"); ok {
		in.domain = kurzvalidation.NormalizeHostname(d)
		f.check("domain", &in.domain, kurzvalidation.Hostname)
	}
	in.notFoundURL = f.str("not_found_url", true)
	f.check("not_found_url", in.notFoundURL.value, kurzvalidation.URL)
	in.expiredURL = f.str("expired_url", true)
	f.check("expired_url", in.expiredURL.value, kurzvalidation.URL)
	return in, f.errs.err()
}

func (in domainInput) apply(spec *kurzv1alpha1.DomainSpec) {
	spec.Domain = kurzv1alpha1.Hostname(in.domain)
	applyURL(in.notFoundURL, &spec.NotFoundURL)
	applyURL(in.expiredURL, &spec.ExpiredURL)
}

// POST /api/v1/domains
func (s *server) createDomain(w http.ResponseWriter, r *http.Request, c *caller) error {
	return s.domains.create(s, w, r, c, s.prepareDomainWrite, s.createDomainObject)
}

// prepareDomainWrite does what create (cur nil) and update share before
// they write: decode and validate the body, lock the hostname on this
// replica, refuse a hostname the workspace already has, and find the
// workspace id. Nothing is written yet; on success the caller must call
// unlock. The stamp also sets the challenge record and begins the claim
// (see stampClaim) against the Domains that claimed the hostname before.
func (s *server) prepareDomainWrite(r *http.Request, c *caller, cur *kurzv1alpha1.Domain) (p prepared[*kurzv1alpha1.Domain], err error) {
	var in domainInput
	// The live Domains claiming the hostname, when the write claims it anew
	// (a create, or an update that changes the hostname).
	var claimants []kurzv1alpha1.Domain
	in, p.unlock, err = lockedInput(s, r, decodeDomainInput,
		func(in domainInput) string { return "domain/" + in.domain },
		func(in domainInput) (err error) {
			claimants, p.workspaceID, err = s.checkDomainClaims(r.Context(), c, in.domain, cur)
			return err
		})
	p.apply = func(d *kurzv1alpha1.Domain) { in.apply(&d.Spec) }
	times := timestamps.StampDomain
	if cur != nil {
		times = timestamps.TouchDomain
	}
	p.stamp = stampClaim(claimants, p.workspaceID, times)
	return p, err
}

// checkDomainClaims returns the live Domains claiming host, when the write
// claims it anew, and the workspace id. Keeping the hostname changes no
// claim, so a younger Domain claiming it elsewhere (applied with kubectl)
// must not lock the owner out.
func (s *server) checkDomainClaims(ctx context.Context, c *caller, host string, cur *kurzv1alpha1.Domain) (claimants []kurzv1alpha1.Domain, workspaceID string, err error) {
	var self types.UID
	if cur != nil {
		self = cur.UID
	}
	if cur == nil || host != string(cur.Spec.Domain) {
		if claimants, err = s.domainsNamed(ctx, host); err != nil {
			return nil, "", err
		}
		if err := hostnameFreeInWorkspace(claimants, c.workspace, self); err != nil {
			return nil, "", err
		}
	}
	workspaceID, err = s.workspaceID(ctx, c)
	return claimants, workspaceID, err
}

// createDomainObject names the Domain after its hostname, so that `kubectl
// get domain example.com` works, unless that name is taken in the
// namespace (by a Domain since renamed); then the name is generated.
func (s *server) createDomainObject(ctx context.Context, d *kurzv1alpha1.Domain) error {
	host := string(d.Spec.Domain)
	if len(validation.IsDNS1123Subdomain(host)) == 0 {
		d.Name = host
		err := s.client.Create(ctx, d)
		if err == nil {
			return nil
		}
		if !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("create domain: %w", err)
		}
		d.Name, d.ResourceVersion = "", ""
	}
	d.GenerateName = domainNamePrefix(host)
	if err := s.client.Create(ctx, d); err != nil {
		return fmt.Errorf("create domain: %w", err)
	}
	return nil
}

// domainNamePrefix is a GenerateName for a hostname whose own name is taken.
func domainNamePrefix(host string) string {
	if len(host) > 50 {
		host = host[:50]
	}
	for len(host) > 0 && (host[len(host)-1] == '.' || host[len(host)-1] == '-') {
		host = host[:len(host)-1]
	}
	if host == "" {
		return "domain-"
	}
	return host + "-"
}

// PUT /api/v1/domains/{id}
func (s *server) updateDomain(w http.ResponseWriter, r *http.Request, c *caller) error {
	return s.domains.replace(s, w, r, c, s.prepareDomainWrite)
}

// DELETE /api/v1/domains/{id}. The domain's links stay: they stop serving
// until a Domain with the hostname returns (docs/api.md, "Domains").
func (s *server) deleteDomain(w http.ResponseWriter, r *http.Request, c *caller) error {
	return s.domains.remove(s, w, r, c, msgDomainDeleted)
}

// hostnameFreeInWorkspace refuses a hostname that another live Domain of
// the workspace (other than self) has: one Domain per hostname and
// workspace. Another workspace's claim is no reason to refuse: who owns a
// hostname is decided by claims (DNS proof first), and refusing would let a
// squatter's early claim lock the real owner out.
func hostnameFreeInWorkspace(claimants []kurzv1alpha1.Domain, workspace string, self types.UID) error {
	for _, d := range claimants {
		if d.Namespace == workspace && d.UID != self {
			return validationError("domain", "The domain has already been taken.")
		}
	}
	return nil
}

// stampClaim wraps a timestamp stamp so the same status write also sets the
// challenge record and begins the claim (contested when another workspace
// holds the hostname), as the controller would: the Domain says at once
// which TXT record moves the hostname to it.
func stampClaim(claimants []kurzv1alpha1.Domain, workspaceID string, stampTimes func(*kurzv1alpha1.Domain, time.Time) bool) func(*kurzv1alpha1.Domain, time.Time) bool {
	return func(d *kurzv1alpha1.Domain, now time.Time) bool {
		changed := stampTimes(d, now)
		if claims.SetChallenge(d, types.UID(workspaceID)) {
			changed = true
		}
		if claims.Begin(d, claimants, now) {
			changed = true
		}
		return changed
	}
}
