package apiserver

import (
	"context"
	"fmt"
	"net/http"
	"regexp"
	"strings"

	"golang.org/x/crypto/bcrypt"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kurzv1alpha1 "github.com/kurz-dev/kurz/api/v1alpha1"
	"github.com/kurz-dev/kurz/internal/claims"
	"github.com/kurz-dev/kurz/internal/fieldindex"
	"github.com/kurz-dev/kurz/internal/pagination"
	"github.com/kurz-dev/kurz/internal/timestamps"
)

const (
	linksPath = "/api/v1/links"
	// msgLinkDeleted answers a delete.
	msgLinkDeleted = "Link deleted successfully."
)

// GET /api/v1/links: one page of the workspace's links, newest first.
func (s *server) listLinks(w http.ResponseWriter, r *http.Request, c *caller) error {
	wid, err := s.workspaceID(r.Context(), c)
	if err != nil {
		return err
	}
	page := pagination.ParsePage(r.URL.Query().Get("page"))
	items, total := s.links.Page(c.workspace, pagination.Offset(page), pagination.PerPage)
	views := make([]linkView, len(items))
	for i, l := range items {
		views[i] = newLinkView(l, wid)
	}
	writeJSON(w, http.StatusOK, pagination.Build(s.listURL(r, linksPath), page, total, views))
	return nil
}

// GET /api/v1/links/{id}
func (s *server) showLink(w http.ResponseWriter, r *http.Request, c *caller) error {
	l, err := s.findLink(r.Context(), c, r.PathValue("id"))
	if err != nil {
		return err
	}
	wid, err := s.workspaceID(r.Context(), c)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, newLinkView(l, wid))
	return nil
}

// POST /api/v1/links
func (s *server) createLink(w http.ResponseWriter, r *http.Request, c *caller) error {
	ctx := r.Context()
	in, hash, wid, unlock, err := s.prepareLinkWrite(r, c, nil)
	if err != nil {
		return err
	}
	defer unlock()

	link := &kurzv1alpha1.Link{ObjectMeta: metav1.ObjectMeta{
		Namespace:    c.workspace,
		GenerateName: linkNamePrefix(in.key),
	}}
	in.apply(&link.Spec, hash)
	if err := s.client.Create(ctx, link); err != nil {
		return fmt.Errorf("create link: %w", err)
	}
	stamp(ctx, s, link, timestamps.StampLink)
	awaitWrite(ctx, s, s.links, link)
	writeJSON(w, http.StatusCreated, newLinkView(link, wid))
	return nil
}

// PUT /api/v1/links/{id}
func (s *server) updateLink(w http.ResponseWriter, r *http.Request, c *caller) error {
	ctx := r.Context()
	cur, err := s.findLink(ctx, c, r.PathValue("id"))
	if err != nil {
		return err
	}
	in, hash, wid, unlock, err := s.prepareLinkWrite(r, c, cur)
	if err != nil {
		return err
	}
	defer unlock()

	link := cur
	for attempt := 1; ; attempt++ {
		orig := link.DeepCopy()
		in.apply(&link.Spec, hash)
		err = s.client.Patch(ctx, link, specPatch(orig))
		if err == nil {
			break
		}
		if !apierrors.IsConflict(err) || attempt == maxWriteAttempts {
			return linkWriteError(err)
		}
		// Someone else wrote in between (a click flush, kubectl): apply
		// this request to what is there now.
		fresh := &kurzv1alpha1.Link{}
		if err := s.live.Get(ctx, client.ObjectKeyFromObject(cur), fresh); err != nil {
			return linkWriteError(err)
		}
		if fresh.UID != cur.UID || fresh.DeletionTimestamp != nil {
			return errLinkNotFound()
		}
		link = fresh
	}
	stamp(ctx, s, link, timestamps.TouchLink)
	awaitWrite(ctx, s, s.links, link)
	writeJSON(w, http.StatusOK, newLinkView(link, wid))
	return nil
}

// DELETE /api/v1/links/{id}
func (s *server) deleteLink(w http.ResponseWriter, r *http.Request, c *caller) error {
	ctx := r.Context()
	l, err := s.findLink(ctx, c, r.PathValue("id"))
	if err != nil {
		return err
	}
	if err := s.client.Delete(ctx, l, client.Preconditions{UID: &l.UID}); err != nil {
		return linkWriteError(err)
	}
	awaitDelete(ctx, s, s.links, l, &kurzv1alpha1.Link{})
	writeJSON(w, http.StatusOK, messageBody{Message: msgLinkDeleted})
	return nil
}

// messageBody is the answer of a delete.
type messageBody struct {
	Message string `json:"message"`
}

// linkWriteError says "not found" for a link deleted (or replaced) while
// the request was being served.
func linkWriteError(err error) error {
	if apierrors.IsNotFound(err) || (apierrors.IsConflict(err) && isUIDPrecondition(err)) {
		return errLinkNotFound()
	}
	return err
}

// isUIDPrecondition tells a failed uid precondition (the name now belongs
// to another object) from an ordinary resourceVersion conflict.
func isUIDPrecondition(err error) bool {
	return strings.Contains(err.Error(), "Precondition failed: UID")
}

// prepareLinkWrite does what create (cur nil) and update share before they
// write: decode and validate the body, lock the domain+key on this replica,
// check the claims, hash the password and find the workspace id. Nothing is
// written yet; on success the caller must call unlock.
func (s *server) prepareLinkWrite(r *http.Request, c *caller, cur *kurzv1alpha1.Link) (in linkInput, hash *string, workspaceID string, unlock func(), err error) {
	raw, err := decodeObject(r)
	if err != nil {
		return in, nil, "", nil, err
	}
	if in, err = decodeLinkInput(raw); err != nil {
		return in, nil, "", nil, err
	}
	release := s.locks.lock(c.workspace + "/" + in.domain + "/" + in.key)
	ctx := r.Context()
	if err = s.checkLinkClaims(ctx, c, in, cur); err == nil {
		if hash, err = hashPassword(in.password); err == nil {
			workspaceID, err = s.workspaceID(ctx, c)
		}
	}
	if err != nil {
		release()
		return in, nil, "", nil, err
	}
	return in, hash, workspaceID, release, nil
}

// checkLinkClaims checks what needs the cluster: the domain is held by a
// Domain of the caller's workspace, and no other link there has the key.
// self is the link being updated.
func (s *server) checkLinkClaims(ctx context.Context, c *caller, in linkInput, self *kurzv1alpha1.Link) error {
	var f fieldErrors
	// An update that keeps domain and key claims nothing new: a younger
	// duplicate applied with kubectl must not lock the holder out. (A changed
	// key or domain cannot match self, so self needs no exclusion below.)
	keepsKey := self != nil && string(self.Spec.Domain) == in.domain && self.Spec.Key == in.key
	if !keepsKey {
		taken, err := s.keyTaken(ctx, c.workspace, in.domain, in.key)
		if err != nil {
			return err
		}
		if taken {
			f.add("key", "The key has already been taken.")
		}
	}
	domains, err := s.domainsNamed(ctx, in.domain)
	if err != nil {
		return err
	}
	if owner := claims.DomainOwner(domains); owner == nil || owner.Namespace != c.workspace {
		f.add("domain", "The selected domain is invalid.")
	}
	return f.err()
}

// keyTaken reports whether a live Link of the workspace holds domain+key.
// It reads through the domain+key index, without copies: only the Links
// with this very key, however many links the domain holds.
func (s *server) keyTaken(ctx context.Context, workspace, domain, key string) (bool, error) {
	var links kurzv1alpha1.LinkList
	if err := s.client.List(ctx, &links, client.InNamespace(workspace),
		client.MatchingFields{fieldindex.DomainKey: fieldindex.DomainKeyOf(domain, key)},
		client.UnsafeDisableDeepCopy); err != nil {
		return false, fmt.Errorf("list links on %s: %w", domain, err)
	}
	for i := range links.Items {
		if links.Items[i].DeletionTimestamp == nil {
			return true, nil
		}
	}
	return false, nil
}

// hashPassword returns the bcrypt hash of a password being set, nil when
// none is (absent or cleared).
func hashPassword(p optional[string]) (*string, error) {
	if p.value == nil {
		return nil, nil
	}
	b, err := bcrypt.GenerateFromPassword([]byte(*p.value), bcrypt.DefaultCost)
	if err != nil {
		return nil, fmt.Errorf("hash password: %w", err)
	}
	h := string(b)
	return &h, nil
}

var nameUnsafe = regexp.MustCompile(`[^a-z0-9-]+`)

// linkNamePrefix is the GenerateName of a link: its key made a valid object
// name ("Summer_Sale" -> "summer-sale-"), so `kubectl get links` is
// readable; kube-apiserver appends a random suffix.
func linkNamePrefix(key string) string {
	name := nameUnsafe.ReplaceAllString(strings.ToLower(key), "-")
	name = strings.Trim(name, "-")
	if len(name) > 40 {
		name = strings.TrimRight(name[:40], "-")
	}
	if name == "" {
		name = "link"
	}
	return name + "-"
}

// listURL is the absolute URL of a list endpoint: --api-public-url when
// set (deployments behind proxies), else the request's scheme and Host.
func (s *server) listURL(r *http.Request, path string) string {
	if s.opts.PublicURL != "" {
		return strings.TrimRight(s.opts.PublicURL, "/") + path
	}
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	return scheme + "://" + r.Host + path
}
