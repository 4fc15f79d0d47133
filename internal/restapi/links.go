package restapi

import (
	"context"
	"fmt"
	"net/http"
	"strings"

	"golang.org/x/crypto/bcrypt"

	kurzv1alpha1 "github.com/kurz-dev/kurz/api/v1alpha1"
	"github.com/kurz-dev/kurz/internal/claims"
	"github.com/kurz-dev/kurz/internal/timestamps"
)

const (
	linksPath = "/api/v1/links"
	// msgLinkDeleted answers a delete.
	msgLinkDeleted = "Link deleted successfully."
)

// GET /api/v1/links/{id}
func (s *server) showLink(w http.ResponseWriter, r *http.Request, c *caller) error {
	l, err := s.links.find(r.Context(), s, c, r.PathValue("id"))
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
	return s.links.create(s, w, r, c, s.prepareLinkWrite, s.createLinkObject)
}

// createLinkObject creates the Link under a name generated from its key,
// with its creation time announced in it: the controller's first status
// write records it, so the API writes no stamp of its own (which was a
// third write per Link, and raced the controller's first one).
func (s *server) createLinkObject(ctx context.Context, l *kurzv1alpha1.Link) error {
	l.GenerateName = kurzv1alpha1.LinkNamePrefix(l.Spec.Key)
	timestamps.Announce(l, s.now())
	if err := s.client.Create(ctx, l); err != nil {
		return fmt.Errorf("create link: %w", err)
	}
	return nil
}

// PUT /api/v1/links/{id}
func (s *server) updateLink(w http.ResponseWriter, r *http.Request, c *caller) error {
	return s.links.replace(s, w, r, c, s.prepareLinkWrite)
}

// DELETE /api/v1/links/{id}
func (s *server) deleteLink(w http.ResponseWriter, r *http.Request, c *caller) error {
	return s.links.remove(s, w, r, c, msgLinkDeleted)
}

// messageBody is the answer of a delete.
type messageBody struct {
	Message string `json:"message"`
}

// prepareLinkWrite does what create (cur nil) and update share before they
// write: decode and validate the body, lock the domain+key on this replica,
// check the claims, hash the password and find the workspace id. Nothing is
// written yet; on success the caller must call unlock.
func (s *server) prepareLinkWrite(r *http.Request, c *caller, cur *kurzv1alpha1.Link) (p prepared[*kurzv1alpha1.Link], err error) {
	var in linkInput
	// hash is the bcrypt hash of a password being set, nil when none is.
	var hash *string
	in, p.unlock, err = lockedInput(s, r, decodeLinkInput,
		func(in linkInput) string { return c.workspace + "/" + in.domain + "/" + in.key },
		func(in linkInput) (err error) {
			ctx := r.Context()
			if err = s.checkLinkClaims(ctx, c, in, cur, nil); err != nil {
				return err
			}
			if hash, err = hashPassword(in.password); err != nil {
				return err
			}
			p.workspaceID, err = s.workspaceID(ctx, c)
			return err
		})
	p.apply = func(l *kurzv1alpha1.Link) { in.apply(&l.Spec, hash) }
	if cur != nil {
		// A create needs no stamp: createLinkObject announced its time.
		p.stamp = timestamps.TouchLink
	}
	return p, err
}

// checkLinkClaims checks what needs the cluster: the domain is held by a
// Domain of the caller's workspace, and no other link there has the key.
// self is the link being updated. held, when not nil, remembers the
// answers for hostnames across the items of one bulk request.
func (s *server) checkLinkClaims(ctx context.Context, c *caller, in linkInput, self *kurzv1alpha1.Link, held map[string]bool) error {
	var f fieldErrors
	// An update that keeps domain and key claims nothing new: a younger
	// duplicate applied with kubectl must not lock the holder out. (A changed
	// key or domain cannot match self, so self needs no exclusion below.)
	keepsKey := self != nil && string(self.Spec.Domain) == in.domain && self.Spec.Key == in.key
	if !keepsKey {
		taken, err := s.keyTaken(c.workspace, in.domain, in.key)
		if err != nil {
			return err
		}
		if taken {
			f.add("key", "The key has already been taken.")
		}
	}
	own, known := held[in.domain]
	if !known {
		domains, err := s.domainsNamed(ctx, in.domain)
		if err != nil {
			return err
		}
		owner := claims.DomainOwner(domains)
		own = owner != nil && owner.Namespace == c.workspace
		if held != nil {
			held[in.domain] = own
		}
	}
	if !own {
		f.add("domain", "The selected domain is invalid.")
	}
	return f.err()
}

// keyTaken reports whether a live Link of the workspace holds domain+key.
// It reads through the domain+key index, without copies: only the Links
// with this very key, however many links the domain holds.
func (s *server) keyTaken(workspace, domain, key string) (bool, error) {
	links, err := s.cachedLinks.KeyPeers(workspace, domain, key)
	if err != nil {
		return false, err
	}
	for i := range links {
		if links[i].DeletionTimestamp == nil {
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
