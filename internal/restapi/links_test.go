package restapi

import (
	"context"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/kurz-dev/kurz/internal/testenv"

	. "github.com/onsi/gomega"
	"golang.org/x/crypto/bcrypt"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kurzv1alpha1 "github.com/kurz-dev/kurz/api/v1alpha1"
	"github.com/kurz-dev/kurz/internal/cacheslim"
)

var microTimestamp = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$`)

// linkObject reads the Link behind an API id straight from kube-apiserver.
func linkObject(t *testing.T, ns, id string) *kurzv1alpha1.Link {
	t.Helper()
	var list kurzv1alpha1.LinkList
	NewWithT(t).Expect(k8s.List(context.Background(), &list, client.InNamespace(ns))).To(Succeed())
	for i := range list.Items {
		if string(list.Items[i].UID) == id {
			return &list.Items[i]
		}
	}
	t.Fatalf("no Link with uid %s in %s", id, ns)
	return nil
}

func TestLinkLifecycle(t *testing.T) {
	testenv.Need(t)
	g := NewWithT(t)
	w, host := newWorkspaceWithDomain(t)

	// Create with every field.
	created := w.createLink(t, map[string]any{
		"key": "summer-sale", "domain": host, "url": "https://shop.example.com/sale?x=1",
		"ios": "https://apps.apple.com/app/1", "android": "https://play.google.com/store/apps/details?id=x",
		"utm_source": "newsletter", "utm_medium": "email", "utm_campaign": "summer", "utm_term": "shoes",
		"utm_content": "hero", "utm_name": "s25", "external_id": 42, "password": "open sesame",
		"expires_at": "2030-01-02T03:04:05Z", "expired_redirect_url": "https://shop.example.com/over",
		"tags": []string{"sale", "summer", "sale"},
	})
	id := created["id"].(string)
	g.Expect(created).To(HaveKeyWithValue("workspace_id", w.uid))
	g.Expect(created).To(HaveKeyWithValue("link", "https://"+host+"/summer-sale"))
	g.Expect(created).To(HaveKeyWithValue("clicks", BeNumerically("==", 0)))
	g.Expect(created).To(HaveKeyWithValue("last_click", BeNil()))
	g.Expect(created).To(HaveKeyWithValue("password", BeNumerically("==", 1)))
	g.Expect(created).To(HaveKeyWithValue("external_id", BeNumerically("==", 42)))
	g.Expect(created).To(HaveKeyWithValue("expires_at", "2030-01-02T03:04:05.000000Z"))
	g.Expect(created).To(HaveKeyWithValue("tags", ConsistOf("sale", "summer")))
	g.Expect(created).To(HaveKeyWithValue("utm_name", "s25"))
	g.Expect(created["created_at"]).To(MatchRegexp(microTimestamp.String()))
	g.Expect(created["updated_at"]).To(Equal(created["created_at"]))

	// Stored as kubectl sees it: a bcrypt hash, a readable name, the
	// creation time for the controller's first status write to record.
	obj := linkObject(t, w.ns, id)
	g.Expect(obj.Name).To(HavePrefix("summer-sale-"))
	g.Expect(obj.Spec.PasswordHash).NotTo(BeNil())
	g.Expect(bcrypt.CompareHashAndPassword([]byte(*obj.Spec.PasswordHash), []byte("open sesame"))).To(Succeed())
	g.Expect(obj.Annotations).To(HaveKeyWithValue(kurzv1alpha1.LinkCreatedAtAnnotation, created["created_at"]))

	// Read-your-writes: show and list see it at once.
	shown := w.editor.do("GET", "/api/v1/links/"+id, nil)
	g.Expect(shown.status).To(Equal(http.StatusOK), "%s", shown)
	g.Expect(shown.body).To(Equal(created))
	upper := w.editor.do("GET", "/api/v1/links/"+strings.ToUpper(id), nil)
	g.Expect(upper.body).To(Equal(created), "ids are UUIDs: case does not matter")
	list := w.viewer.do("GET", "/api/v1/links", nil)
	g.Expect(list.status).To(Equal(http.StatusOK))
	g.Expect(list.body["data"]).To(ConsistOf(created))

	// Update: required fields replaced, absent kept, null cleared.
	time.Sleep(2 * time.Millisecond) // distinct microsecond stamps, not a wait
	upd := w.editor.do("PUT", "/api/v1/links/"+id, map[string]any{
		"key": "winter-sale", "domain": host, "url": "https://shop.example.com/winter",
		"ios": nil, "password": nil, "utm_source": "", "tags": []string{"winter"},
	})
	g.Expect(upd.status).To(Equal(http.StatusOK), "%s", upd)
	g.Expect(upd.body).To(HaveKeyWithValue("key", "winter-sale"))
	g.Expect(upd.body).To(HaveKeyWithValue("url", "https://shop.example.com/winter"))
	g.Expect(upd.body).To(HaveKeyWithValue("link", "https://"+host+"/winter-sale"))
	g.Expect(upd.body).To(HaveKeyWithValue("ios", BeNil()))
	g.Expect(upd.body).To(HaveKeyWithValue("password", BeNil()))
	g.Expect(upd.body).To(HaveKeyWithValue("utm_source", BeNil()))
	g.Expect(upd.body).To(HaveKeyWithValue("utm_medium", "email"))
	g.Expect(upd.body).To(HaveKeyWithValue("android", created["android"]))
	g.Expect(upd.body).To(HaveKeyWithValue("external_id", BeNumerically("==", 42)))
	g.Expect(upd.body).To(HaveKeyWithValue("tags", ConsistOf("winter")))
	g.Expect(upd.body).To(HaveKeyWithValue("created_at", created["created_at"]))
	g.Expect(upd.body["updated_at"]).To(MatchRegexp(microTimestamp.String()))
	g.Expect(upd.body["updated_at"].(string) > created["updated_at"].(string)).To(BeTrue(), "updated_at refreshed")
	g.Expect(w.editor.do("GET", "/api/v1/links/"+id, nil).body).To(Equal(upd.body))
	g.Expect(linkObject(t, w.ns, id).Spec.PasswordHash).To(BeNil())

	// An update that changes nothing still refreshes updated_at, as the
	// contract promises for every update.
	time.Sleep(2 * time.Millisecond) // distinct microsecond stamps, not a wait
	same := w.editor.do("PUT", "/api/v1/links/"+id, map[string]any{
		"key": "winter-sale", "domain": host, "url": "https://shop.example.com/winter",
	})
	g.Expect(same.status).To(Equal(http.StatusOK), "%s", same)
	g.Expect(same.body["updated_at"].(string) > upd.body["updated_at"].(string)).To(BeTrue(), "updated_at refreshed by a no-op update")
	g.Expect(same.body["created_at"]).To(Equal(created["created_at"]))
	g.Expect(w.editor.do("GET", "/api/v1/links/"+id, nil).body).To(Equal(same.body))

	// Delete, then it is gone for every read.
	del := w.editor.do("DELETE", "/api/v1/links/"+id, nil)
	g.Expect(del.status).To(Equal(http.StatusOK), "%s", del)
	g.Expect(del.body).To(Equal(map[string]any{"message": "Link deleted successfully."}))
	g.Expect(w.editor.do("GET", "/api/v1/links/"+id, nil).status).To(Equal(http.StatusNotFound))
	g.Expect(w.editor.do("DELETE", "/api/v1/links/"+id, nil).status).To(Equal(http.StatusNotFound))
	g.Expect(w.editor.do("PUT", "/api/v1/links/"+id, map[string]any{"key": "a", "domain": host, "url": "https://a.example"}).status).To(Equal(http.StatusNotFound))
	g.Expect(w.editor.do("GET", "/api/v1/links", nil).body["data"]).To(BeEmpty())
}

func TestLinkMinimalAndDefaults(t *testing.T) {
	testenv.Need(t)
	g := NewWithT(t)
	w, host := newWorkspaceWithDomain(t)
	l := w.createLink(t, map[string]any{"key": "Ab_9", "domain": "  " + host + "  ", "url": "https://example.com"})
	for _, field := range []string{"ios", "android", "utm_source", "utm_medium", "utm_campaign", "utm_term", "utm_content",
		"utm_name", "last_click", "external_id", "password", "expires_at", "expired_redirect_url"} {
		g.Expect(l).To(HaveKeyWithValue(field, BeNil()), field)
	}
	g.Expect(l).To(HaveKeyWithValue("tags", BeEmpty()))
	g.Expect(l).To(HaveKeyWithValue("domain", host))
	g.Expect(l).To(HaveLen(25), "every field of the contract, and state and state_reason")
}

// TestLinkHolderUpdatesDespiteKubectlDuplicate: a younger Link applied with
// kubectl on the same domain and key loses (KeyConflict); the holder must
// still be editable through the API.
func TestLinkHolderUpdatesDespiteKubectlDuplicate(t *testing.T) {
	testenv.Need(t)
	g := NewWithT(t)
	w, host := newWorkspaceWithDomain(t)
	holder := w.createLink(t, map[string]any{"key": "dup", "domain": host, "url": "https://example.com/a"})
	g.Expect(k8s.Create(context.Background(), &kurzv1alpha1.Link{
		ObjectMeta: metav1.ObjectMeta{Namespace: w.ns, Name: "dup-by-kubectl"},
		Spec:       kurzv1alpha1.LinkSpec{Domain: kurzv1alpha1.Hostname(host), Key: "dup", URL: "https://example.com/b"},
	})).To(Succeed())
	g.Eventually(func() any {
		return w.editor.do("GET", "/api/v1/links", nil).body["meta"]
	}, "20s").Should(HaveKeyWithValue("total", BeNumerically("==", 2)), "the API's cache holds the duplicate")

	r := w.editor.do("PUT", "/api/v1/links/"+holder["id"].(string), map[string]any{"key": "dup", "domain": host, "url": "https://example.com/c"})
	g.Expect(r.status).To(Equal(http.StatusOK), "%s", r)
	g.Expect(r.body).To(HaveKeyWithValue("url", "https://example.com/c"))

	// Taking a key that another link holds is still refused.
	other := w.createLink(t, map[string]any{"key": "other", "domain": host, "url": "https://example.com/d"})
	r = w.editor.do("PUT", "/api/v1/links/"+other["id"].(string), map[string]any{"key": "dup", "domain": host, "url": "https://example.com/d"})
	expectFieldError(g, r, "key", "The key has already been taken.")
}

// TestLinkUpdateKeepsWhatTheCacheDrops: the cache keeps no last-applied
// annotation (internal/cacheslim), so an update through the API must write
// only what it changes, not the cached object whole.
func TestLinkUpdateKeepsWhatTheCacheDrops(t *testing.T) {
	testenv.Need(t)
	g := NewWithT(t)
	ctx := context.Background()
	w, host := newWorkspaceWithDomain(t)
	applied := &kurzv1alpha1.Link{
		ObjectMeta: metav1.ObjectMeta{Namespace: w.ns, Name: "applied", Annotations: map[string]string{
			cacheslim.LastApplied: `{"apiVersion":"kurz.dev/v1alpha1","kind":"Link"}`,
			"team":                "growth",
		}},
		Spec: kurzv1alpha1.LinkSpec{Domain: kurzv1alpha1.Hostname(host), Key: "applied", URL: "https://example.com/a"},
	}
	g.Expect(k8s.Create(ctx, applied)).To(Succeed())
	id := string(applied.UID)
	g.Eventually(func() int { return w.editor.do("GET", "/api/v1/links/"+id, nil).status }, "20s").Should(Equal(http.StatusOK))

	r := w.editor.do("PUT", "/api/v1/links/"+id, map[string]any{"key": "applied", "domain": host, "url": "https://example.com/b"})
	g.Expect(r.status).To(Equal(http.StatusOK), "%s", r)

	var stored kurzv1alpha1.Link
	g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(applied), &stored)).To(Succeed())
	g.Expect(string(stored.Spec.URL)).To(Equal("https://example.com/b"))
	g.Expect(stored.Annotations).To(Equal(applied.Annotations))
	g.Expect(stored.ManagedFields).NotTo(BeEmpty())
}
