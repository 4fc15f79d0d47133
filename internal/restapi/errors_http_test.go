package restapi

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/kurz-dev/kurz/internal/testenv"

	. "github.com/onsi/gomega"
)

func TestLinkValidation(t *testing.T) {
	testenv.Need(t)
	w, host := newWorkspaceWithDomain(t)
	other := newWorkspace(t)
	foreign := uniqueHost()
	other.createDomain(t, foreign)
	w.createLink(t, map[string]any{"key": "taken", "domain": host, "url": "https://example.com"})

	valid := func(extra map[string]any) map[string]any {
		b := map[string]any{"key": "k" + fmt.Sprint(hostCounter.Add(1)), "domain": host, "url": "https://example.com/x"}
		for k, v := range extra {
			if v == "<absent>" {
				delete(b, k)
				continue
			}
			b[k] = v
		}
		return b
	}
	tests := []struct {
		name    string
		body    map[string]any
		field   string
		message string
	}{
		{"missing key", valid(map[string]any{"key": "<absent>"}), "key", "The key field is required."},
		{"null key", valid(map[string]any{"key": nil}), "key", "The key field is required."},
		{"blank key", valid(map[string]any{"key": "   "}), "key", "The key field is required."},
		{"key not a string", valid(map[string]any{"key": 5}), "key", "The key field must be a string."},
		{"key with slash", valid(map[string]any{"key": "a/b"}), "key", "The key field may contain only letters, digits, dashes and underscores."},
		{"key too long", valid(map[string]any{"key": strings.Repeat("k", 65)}), "key", "The key field must not be greater than 64 characters."},
		{"key taken", valid(map[string]any{"key": "taken"}), "key", "The key has already been taken."},
		{"missing domain", valid(map[string]any{"domain": "<absent>"}), "domain", "The domain field is required."},
		{"domain not a string", valid(map[string]any{"domain": []string{"a"}}), "domain", "The domain field must be a string."},
		{"domain malformed", valid(map[string]any{"domain": "exa_mple.com"}), "domain", "The domain field must be a valid domain name."},
		{"domain unknown", valid(map[string]any{"domain": "nowhere.example.org"}), "domain", "The selected domain is invalid."},
		{"domain of another workspace", valid(map[string]any{"domain": foreign}), "domain", "The selected domain is invalid."},
		{"missing url", valid(map[string]any{"url": "<absent>"}), "url", "The url field is required."},
		{"url javascript", valid(map[string]any{"url": "javascript:alert(1)"}), "url", "The url field must be an absolute http or https URL with a host."},
		{"url user-info", valid(map[string]any{"url": "https://u:p@example.com"}), "url", "The url field must not contain user-info (user:password@)."},
		{"url with a space", valid(map[string]any{"url": "https://example.com/a b"}), "url", "The url field must not contain spaces or control characters (percent-encode them)."},
		{"url too long", valid(map[string]any{"url": "https://e.com/" + strings.Repeat("a", 2048)}), "url", "The url field must not be greater than 2048 characters."},
		{"ios data", valid(map[string]any{"ios": "data:,x"}), "ios", "The ios field must be an absolute http or https URL with a host."},
		{"android number", valid(map[string]any{"android": 3}), "android", "The android field must be a string."},
		{"utm too long", valid(map[string]any{"utm_campaign": strings.Repeat("u", 256)}), "utm_campaign", "The utm campaign field must not be greater than 255 characters."},
		{"external id text", valid(map[string]any{"external_id": "abc"}), "external_id", "The external id field must be an integer."},
		{"external id float", valid(map[string]any{"external_id": 1.5}), "external_id", "The external id field must be an integer."},
		{"external id negative", valid(map[string]any{"external_id": -1}), "external_id", "The external id field must be at least 0."},
		{"password too long", valid(map[string]any{"password": strings.Repeat("p", 73)}), "password", "The password field must not be greater than 72 bytes."},
		{"password not a string", valid(map[string]any{"password": true}), "password", "The password field must be a string."},
		{"expires_at not a date", valid(map[string]any{"expires_at": "next tuesday"}), "expires_at", "The expires at field must be a valid date."},
		{"expires_at in year 1 (stored as null)", valid(map[string]any{"expires_at": "0001-01-01T00:00:00Z"}), "expires_at", "The expires at field must be a valid date."},
		{"expired_redirect_url file", valid(map[string]any{"expired_redirect_url": "file:///etc/passwd"}), "expired_redirect_url", "The expired redirect url field must be an absolute http or https URL with a host."},
		{"tags not an array", valid(map[string]any{"tags": "sale"}), "tags", "The tags field must be an array."},
		{"tag not a string", valid(map[string]any{"tags": []any{"ok", 7}}), "tags.1", "The tags.1 field must be a string."},
		{"tag too long", valid(map[string]any{"tags": []string{strings.Repeat("t", 65)}}), "tags.0", "The tags.0 field must not be greater than 64 characters."},
		{"bad tag after a repeat keeps its index", valid(map[string]any{"tags": []string{"a", "a", ""}}), "tags.2", "The tags.2 field must not be empty."},
		{"too many tags", valid(map[string]any{"tags": manyTags(33)}), "tags", "The tags field must not have more than 32 items."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			r := w.editor.do("POST", "/api/v1/links", tt.body)
			expectFieldError(g, r, tt.field, tt.message)
			g.Expect(r.body["message"]).To(Equal(tt.message))
		})
	}

	t.Run("every error is reported, summarized like Laravel", func(t *testing.T) {
		g := NewWithT(t)
		r := w.editor.do("POST", "/api/v1/links", map[string]any{"url": "ftp://x", "tags": 1})
		g.Expect(r.status).To(Equal(http.StatusUnprocessableEntity))
		g.Expect(r.body["message"]).To(Equal("The key field is required. (and 3 more errors)"))
		g.Expect(r.body["errors"]).To(HaveKey("key"))
		g.Expect(r.body["errors"]).To(HaveKey("domain"))
		g.Expect(r.body["errors"]).To(HaveKey("url"))
		g.Expect(r.body["errors"]).To(HaveKey("tags"))
		r = w.editor.do("POST", "/api/v1/links", map[string]any{"key": "x", "domain": host})
		g.Expect(r.body["message"]).To(Equal("The url field is required."))
		r = w.editor.do("POST", "/api/v1/links", map[string]any{"domain": host})
		g.Expect(r.body["message"]).To(Equal("The key field is required. (and 1 more error)"))
	})

	t.Run("nothing is written when a request fails", func(t *testing.T) {
		g := NewWithT(t)
		list := w.editor.do("GET", "/api/v1/links", nil)
		g.Expect(list.body["meta"]).To(HaveKeyWithValue("total", BeNumerically("==", 1)))
	})

	t.Run("update validates the same way", func(t *testing.T) {
		g := NewWithT(t)
		l := w.createLink(t, valid(nil))
		r := w.editor.do("PUT", "/api/v1/links/"+l["id"].(string), map[string]any{"key": "taken", "domain": host, "url": "https://e.com"})
		expectFieldError(g, r, "key", "The key has already been taken.")
		r = w.editor.do("PUT", "/api/v1/links/"+l["id"].(string), map[string]any{"domain": host, "url": "https://e.com"})
		g.Expect(r.fieldErrors("key")).To(Equal([]string{"The key field is required."}))
		// Keeping its own key is no conflict.
		r = w.editor.do("PUT", "/api/v1/links/"+l["id"].(string), map[string]any{"key": l["key"], "domain": host, "url": "https://e.com/2"})
		g.Expect(r.status).To(Equal(http.StatusOK), "%s", r)
	})
}

func manyTags(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("t%d", i)
	}
	return out
}

func TestRequestErrors(t *testing.T) {
	testenv.Need(t)
	w, host := newWorkspaceWithDomain(t)
	link := w.createLink(t, map[string]any{"key": "e", "domain": host, "url": "https://example.com"})
	id := link["id"].(string)

	tests := []struct {
		name    string
		client  *apiClient
		method  string
		path    string
		body    any
		status  int
		message string
	}{
		{"malformed JSON", w.editor, "POST", "/api/v1/links", `{"key": `, 400, "The request body is not valid JSON."},
		{"JSON array body", w.editor, "POST", "/api/v1/links", `["key"]`, 400, "The request body must be a JSON object."},
		{"malformed JSON on update", w.editor, "PUT", "/api/v1/links/" + id, `{,}`, 400, "The request body is not valid JSON."},
		{"malformed JSON on domains", w.editor, "POST", "/api/v1/domains", `nope`, 400, "The request body is not valid JSON."},
		{"invalid UTF-8", w.editor, "POST", "/api/v1/links", "{\"key\": \"a\xff\xfe\"}", 400, "The request body is not valid JSON."},
		{"unclean path", w.editor, "GET", "/api/v1//links", nil, 404, "The route api/v1//links could not be found."},
		{"body over 64 KiB", w.editor, "POST", "/api/v1/links", `{"key":"` + strings.Repeat("a", 64<<10) + `"}`, 413, "The request body must not be larger than 64 KiB."},
		{"unknown id", w.editor, "GET", "/api/v1/links/00000000-0000-0000-0000-000000000000", nil, 404, "Link not found."},
		{"unknown domain id", w.editor, "DELETE", "/api/v1/domains/nope", nil, 404, "Domain not found."},
		{"unknown route", w.editor, "GET", "/api/v1/nothing", nil, 404, "The route api/v1/nothing could not be found."},
		{"unknown route without token", &apiClient{t: t, base: baseURL}, "GET", "/", nil, 404, "The route / could not be found."},
		{"wrong method", w.editor, "PATCH", "/api/v1/links/" + id, nil, 405, "The PATCH method is not supported for route api/v1/links/" + id + ". Supported methods: DELETE, GET, HEAD, PUT."},
		{"wrong method on a collection", w.editor, "DELETE", "/api/v1/domains", nil, 405, "The DELETE method is not supported for route api/v1/domains. Supported methods: GET, HEAD, POST."},
		{"no token", &apiClient{t: t, base: baseURL}, "GET", "/api/v1/links", nil, 401, "Unauthenticated."},
		{"bad token", &apiClient{t: t, base: baseURL, token: "not-a-token"}, "GET", "/api/v1/links", nil, 401, "Unauthenticated."},
		{"JWT-shaped but unknown token", &apiClient{t: t, base: baseURL, token: "eyJhbGciOiJub25lIn0.eyJzdWIiOiJ4In0.c2ln"}, "GET", "/api/v1/links", nil, 401, "Unauthenticated."},
		// kube-apiserver may accept a token with text after it; kurz must
		// not, or every suffix would be a fresh rate-limit bucket.
		{"real token with a suffix", &apiClient{t: t, base: baseURL, token: w.editor.token + " x1"}, "GET", "/api/v1/links", nil, 401, "Unauthenticated."},
		{"viewer creates", w.viewer, "POST", "/api/v1/links", map[string]any{}, 403, "This action is unauthorized."},
		{"viewer updates", w.viewer, "PUT", "/api/v1/links/" + id, map[string]any{}, 403, "This action is unauthorized."},
		{"viewer deletes", w.viewer, "DELETE", "/api/v1/links/" + id, nil, 403, "This action is unauthorized."},
		{"viewer creates a domain", w.viewer, "POST", "/api/v1/domains", map[string]any{}, 403, "This action is unauthorized."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			tt.client.t = t
			r := tt.client.do(tt.method, tt.path, tt.body)
			g.Expect(r.status).To(Equal(tt.status), "%s", r)
			g.Expect(r.header.Get("Content-Type")).To(Equal("application/json"))
			g.Expect(r.body).To(Equal(map[string]any{"message": tt.message}))
			if tt.status == http.StatusMethodNotAllowed {
				g.Expect(r.header.Get("Allow")).NotTo(BeEmpty())
			}
		})
	}

	t.Run("viewer may read", func(t *testing.T) {
		g := NewWithT(t)
		w.viewer.t = t
		g.Expect(w.viewer.do("GET", "/api/v1/links/"+id, nil).status).To(Equal(http.StatusOK))
		g.Expect(w.viewer.do("GET", "/api/v1/domains", nil).status).To(Equal(http.StatusOK))
		g.Expect(w.viewer.do("PUT", "/api/v1/links/"+id+"/qr-code", nil).status).To(Equal(http.StatusOK))
	})

	t.Run("a ServiceAccount without a role binding", func(t *testing.T) {
		g := NewWithT(t)
		c := &apiClient{t: t, base: baseURL, token: serviceAccountToken(t, w.ns, "nobody", "", "")}
		g.Expect(c.do("GET", "/api/v1/links", nil).status).To(Equal(http.StatusForbidden))
	})
}

func TestRateLimit(t *testing.T) {
	testenv.Need(t)
	g := NewWithT(t)
	w := newWorkspace(t)
	c := &apiClient{t: t, base: limitedURL, token: w.viewer.token, forwardedFor: uniqueAddress()}
	var last response
	for i := range testRateLimit {
		last = c.do("GET", "/api/v1/links", nil)
		g.Expect(last.status).To(Equal(http.StatusOK), "request %d", i+1)
		g.Expect(last.header.Get("X-RateLimit-Limit")).To(Equal(fmt.Sprint(testRateLimit)))
		g.Expect(last.header.Get("X-RateLimit-Remaining")).To(Equal(fmt.Sprint(testRateLimit - i - 1)))
	}
	last = c.do("GET", "/api/v1/links", nil)
	g.Expect(last.status).To(Equal(http.StatusTooManyRequests), "%s", last)
	g.Expect(last.body).To(Equal(map[string]any{"message": "Too Many Attempts."}))
	g.Expect(last.header.Get("Retry-After")).To(MatchRegexp(`^[1-9][0-9]*$`))
	g.Expect(last.header.Get("X-RateLimit-Remaining")).To(Equal("0"))

	// Limits are per ServiceAccount: the editor of the same workspace is
	// unaffected.
	other := &apiClient{t: t, base: limitedURL, token: w.editor.token, forwardedFor: c.forwardedFor}
	g.Expect(other.do("GET", "/api/v1/links", nil).status).To(Equal(http.StatusOK))
}
