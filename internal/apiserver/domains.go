package apiserver

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kurzv1alpha1 "github.com/kurz-dev/kurz/api/v1alpha1"
	"github.com/kurz-dev/kurz/internal/claims"
	"github.com/kurz-dev/kurz/internal/pagination"
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

// GET /api/v1/domains
func (s *server) listDomains(w http.ResponseWriter, r *http.Request, c *caller) error {
	wid, err := s.workspaceID(r.Context(), c)
	if err != nil {
		return err
	}
	page := pagination.ParsePage(r.URL.Query().Get("page"))
	items, total := s.domains.Page(c.workspace, pagination.Offset(page), pagination.PerPage)
	views := make([]domainView, len(items))
	for i, d := range items {
		views[i] = newDomainView(d, wid)
	}
	writeJSON(w, http.StatusOK, pagination.Build(s.listURL(r, domainsPath), page, total, views))
	return nil
}

// POST /api/v1/domains
func (s *server) createDomain(w http.ResponseWriter, r *http.Request, c *caller) error {
	ctx := r.Context()
	raw, err := decodeObject(r)
	if err != nil {
		return err
	}
	in, err := decodeDomainInput(raw)
	if err != nil {
		return err
	}
	defer s.locks.lock("domain/" + in.domain)()
	claimants, err := s.domainsNamed(ctx, in.domain)
	if err != nil {
		return err
	}
	if err := hostnameFreeInWorkspace(claimants, c.workspace, ""); err != nil {
		return err
	}
	wid, err := s.workspaceID(ctx, c)
	if err != nil {
		return err
	}
	d, err := s.createDomainObject(ctx, c, in)
	if err != nil {
		return err
	}
	stamp(ctx, s, d, stampClaim(claimants, wid, timestamps.StampDomain))
	awaitWrite(ctx, s, s.domains, d)
	writeJSON(w, http.StatusCreated, newDomainView(d, wid))
	return nil
}

// createDomainObject names the Domain after its hostname, so that `kubectl
// get domain example.com` works, unless that name is taken in the
// namespace (by a Domain since renamed); then the name is generated.
func (s *server) createDomainObject(ctx context.Context, c *caller, in domainInput) (*kurzv1alpha1.Domain, error) {
	d := &kurzv1alpha1.Domain{ObjectMeta: metav1.ObjectMeta{Namespace: c.workspace}}
	in.apply(&d.Spec)
	if len(validation.IsDNS1123Subdomain(in.domain)) == 0 {
		d.Name = in.domain
		err := s.client.Create(ctx, d)
		if err == nil {
			return d, nil
		}
		if !apierrors.IsAlreadyExists(err) {
			return nil, fmt.Errorf("create domain: %w", err)
		}
		d.Name, d.ResourceVersion = "", ""
	}
	d.GenerateName = domainNamePrefix(in.domain)
	if err := s.client.Create(ctx, d); err != nil {
		return nil, fmt.Errorf("create domain: %w", err)
	}
	return d, nil
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
	ctx := r.Context()
	cur, err := s.findDomain(ctx, c, r.PathValue("id"))
	if err != nil {
		return err
	}
	raw, err := decodeObject(r)
	if err != nil {
		return err
	}
	in, err := decodeDomainInput(raw)
	if err != nil {
		return err
	}
	defer s.locks.lock("domain/" + in.domain)()
	// Keeping the hostname changes no claim, so a younger Domain claiming
	// it elsewhere (applied with kubectl) must not lock the owner out.
	var claimants []kurzv1alpha1.Domain
	if in.domain != string(cur.Spec.Domain) {
		if claimants, err = s.domainsNamed(ctx, in.domain); err != nil {
			return err
		}
		if err := hostnameFreeInWorkspace(claimants, c.workspace, cur.UID); err != nil {
			return err
		}
	}
	wid, err := s.workspaceID(ctx, c)
	if err != nil {
		return err
	}
	d := cur
	for attempt := 1; ; attempt++ {
		orig := d.DeepCopy()
		in.apply(&d.Spec)
		err = s.client.Patch(ctx, d, specPatch(orig))
		if err == nil {
			break
		}
		if !apierrors.IsConflict(err) || attempt == maxWriteAttempts {
			return domainWriteError(err)
		}
		fresh := &kurzv1alpha1.Domain{}
		if err := s.live.Get(ctx, client.ObjectKeyFromObject(cur), fresh); err != nil {
			return domainWriteError(err)
		}
		if fresh.UID != cur.UID || fresh.DeletionTimestamp != nil {
			return errDomainNotFound()
		}
		d = fresh
	}
	stamp(ctx, s, d, stampClaim(claimants, wid, timestamps.TouchDomain))
	awaitWrite(ctx, s, s.domains, d)
	writeJSON(w, http.StatusOK, newDomainView(d, wid))
	return nil
}

// DELETE /api/v1/domains/{id}. The domain's links stay: they stop serving
// until a Domain with the hostname returns (see DESIGN.md).
func (s *server) deleteDomain(w http.ResponseWriter, r *http.Request, c *caller) error {
	ctx := r.Context()
	d, err := s.findDomain(ctx, c, r.PathValue("id"))
	if err != nil {
		return err
	}
	if err := s.client.Delete(ctx, d, client.Preconditions{UID: &d.UID}); err != nil {
		return domainWriteError(err)
	}
	awaitDelete(ctx, s, s.domains, d, &kurzv1alpha1.Domain{})
	writeJSON(w, http.StatusOK, messageBody{Message: msgDomainDeleted})
	return nil
}

func domainWriteError(err error) error {
	if apierrors.IsNotFound(err) || (apierrors.IsConflict(err) && isUIDPrecondition(err)) {
		return errDomainNotFound()
	}
	return err
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
