package restapi

import (
	"context"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/kurz-dev/kurz/internal/testenv"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	kurzv1alpha1 "github.com/kurz-dev/kurz/api/v1alpha1"
)

// TestLookup finds links by short address: domain and key, or the whole
// short URL; the holder when several links claim the address; nothing of
// another workspace.
func TestLookup(t *testing.T) {
	testenv.Need(t)
	g := NewWithT(t)
	ctx := context.Background()
	w, host := newWorkspaceWithDomain(t)
	docs := w.createLink(t, map[string]any{"key": "docs", "domain": host, "url": "https://example.com/docs"})
	lookup := func(q url.Values) response { return w.viewer.do("GET", "/api/v1/links/lookup?"+q.Encode(), nil) }

	for _, q := range []url.Values{
		{"domain": {host}, "key": {"docs"}},
		{"domain": {" " + host + ". "}, "key": {"docs"}}, // normalized as a body's hostname
		{"link": {"https://" + host + "/docs"}},
		{"link": {"http://" + host + ":8081/docs?utm_source=x#top"}},
		{"link": {host + "/docs"}},
	} {
		r := lookup(q)
		g.Expect(r.status).To(Equal(http.StatusOK), "%s: %s", q.Encode(), r)
		g.Expect(r.body).To(Equal(docs), q.Encode())
	}
	for _, q := range []url.Values{
		{"domain": {host}, "key": {"Docs"}}, // keys are case-sensitive, as redirects are
		{"domain": {host}, "key": {"nope"}},
		{"domain": {"other.example.com"}, "key": {"docs"}},
	} {
		r := lookup(q)
		g.Expect(r.status).To(Equal(http.StatusNotFound), q.Encode())
		g.Expect(r.body).To(Equal(map[string]any{"message": "Link not found."}))
	}
	for _, c := range []struct {
		q          url.Values
		field, msg string
	}{
		{url.Values{"key": {"docs"}}, "domain", "The domain field is required when link is not present."},
		{url.Values{"domain": {host}}, "key", "The key field is required when link is not present."},
		{url.Values{"domain": {"not a host"}, "key": {"docs"}}, "domain", "The domain field must be a valid domain name."},
		{url.Values{"domain": {host}, "key": {"a/b"}}, "key", "The key field may contain only letters, digits, dashes and underscores."},
		{url.Values{"link": {"https://" + host + "/"}}, "link", "The link field must be a short link: https://<domain>/<key>."},
		{url.Values{"link": {"ftp://" + host + "/docs"}}, "link", "The link field must be a short link: https://<domain>/<key>."},
		{url.Values{"link": {"https://" + host + "/a/b"}}, "link", "The link field must be a short link: https://<domain>/<key>."},
		{url.Values{"link": {"https://" + host + "/docs"}, "key": {"docs"}}, "link", "The link field must not be given with domain or key."},
	} {
		expectFieldError(g, lookup(c.q), c.field, c.msg)
	}

	// Two Links applied with kubectl claim one address: the older holds it
	// (claims.KeyWinner), whatever their names say.
	older := &kurzv1alpha1.Link{
		ObjectMeta: metav1.ObjectMeta{Namespace: w.ns, Name: "z-older"},
		Spec:       kurzv1alpha1.LinkSpec{Domain: kurzv1alpha1.Hostname(host), Key: "dup", URL: "https://example.com/older"},
	}
	g.Expect(k8s.Create(ctx, older)).To(Succeed())
	// creationTimestamp has whole seconds: the younger must be a second on.
	g.Eventually(func() bool { return time.Now().Truncate(time.Second).After(older.CreationTimestamp.Time) }, "3s", "50ms").Should(BeTrue())
	g.Expect(k8s.Create(ctx, &kurzv1alpha1.Link{
		ObjectMeta: metav1.ObjectMeta{Namespace: w.ns, Name: "a-younger"},
		Spec:       kurzv1alpha1.LinkSpec{Domain: kurzv1alpha1.Hostname(host), Key: "dup", URL: "https://example.com/younger"},
	})).To(Succeed())
	waitForTotal(t, w.viewer, 3)
	r := lookup(url.Values{"domain": {host}, "key": {"dup"}})
	g.Expect(r.body).To(HaveKeyWithValue("id", string(older.UID)))
	g.Expect(r.body).To(HaveKeyWithValue("url", "https://example.com/older"))

	// Another workspace with the same address sees only its own link.
	other := newWorkspace(t)
	g.Expect(other.viewer.do("GET", "/api/v1/links/lookup?domain="+host+"&key=docs", nil).status).To(Equal(http.StatusNotFound))
}
