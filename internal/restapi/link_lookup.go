package restapi

import (
	"net/http"
	"net/url"
	"strings"

	"github.com/kurz-dev/kurz/internal/claims"
	"github.com/kurz-dev/kurz/internal/validation"
)

// GET /api/v1/links/lookup?domain=...&key=... (or ?link=<short URL>): the
// link of the caller's workspace that holds that address. When several
// claim it (applied with kubectl), the holder is the one claims.KeyWinner
// names, the one the redirect server serves. It reads the cache's
// domain+key index, like the API's own "key taken" check.
func (s *server) lookupLink(w http.ResponseWriter, r *http.Request, c *caller) error {
	domain, key, err := parseLookup(r.URL.Query())
	if err != nil {
		return err
	}
	peers, err := s.cachedLinks.KeyPeers(c.workspace, domain, key)
	if err != nil {
		return err
	}
	holder := claims.KeyWinner(peers)
	if holder == nil {
		return errLinkNotFound()
	}
	wid, err := s.workspaceID(r.Context(), c)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, newLinkView(holder, wid))
	return nil
}

// parseLookup reads the address: link (a whole short URL), or domain and
// key. The hostname is normalized as a body's is; the key is matched
// exactly (keys are case-sensitive, as redirects are).
func parseLookup(q url.Values) (domain, key string, err error) {
	p := newListParams(q)
	link := p.single("link")
	domain, key = p.single("domain"), p.single("key")
	switch {
	case link != "" && (domain != "" || key != ""):
		p.fail("link", "must not be given with domain or key")
	case link != "":
		var ok bool
		if domain, key, ok = splitShortLink(link); !ok {
			p.fail("link", "must be a short link: https://<domain>/<key>")
		}
	default:
		if domain == "" {
			p.fail("domain", "is required when link is not present")
		}
		if key == "" {
			p.fail("key", "is required when link is not present")
		}
	}
	if err := p.err(); err != nil {
		return "", "", err
	}
	domain = validation.NormalizeHostname(domain)
	field := func(name string) string {
		if link != "" {
			return "link"
		}
		return name
	}
	if msg := validation.Hostname(domain); msg != "" {
		p.fail(field("domain"), msg)
	}
	if msg := validation.Key(key); msg != "" {
		p.fail(field("key"), msg)
	}
	return domain, key, p.err()
}

// splitShortLink takes the hostname and key out of a short link:
// http(s)://<domain>/<key>, the scheme optional, a port, query or fragment
// ignored.
func splitShortLink(link string) (domain, key string, ok bool) {
	if !strings.Contains(link, "://") {
		link = "https://" + link
	}
	u, err := url.Parse(link)
	if err != nil || u.Scheme != "http" && u.Scheme != "https" || u.Hostname() == "" || u.User != nil {
		return "", "", false
	}
	key = strings.TrimPrefix(u.Path, "/")
	if key == "" || strings.Contains(key, "/") {
		return "", "", false
	}
	return u.Hostname(), key, true
}
