package restapi

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kurz-dev/kurz/internal/testenv"

	. "github.com/onsi/gomega"
	admissionv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kurzv1alpha1 "github.com/kurz-dev/kurz/api/v1alpha1"
)

// TestBulkCreate: good and bad items in one request; each is answered as
// POST /api/v1/links answers the same body.
func TestBulkCreate(t *testing.T) {
	testenv.Need(t)
	g := NewWithT(t)
	w, host := newWorkspaceWithDomain(t)
	w.createLink(t, map[string]any{"key": "taken", "domain": host, "url": "https://example.com/"})
	items := []any{
		map[string]any{"key": "b0", "domain": host, "url": "https://example.com/0", "tags": []string{"imported"}},
		map[string]any{"key": "b1", "domain": host, "url": "javascript:alert(1)"},
		map[string]any{"key": "b0", "domain": host, "url": "https://example.com/dup"},
		map[string]any{"key": "taken", "domain": host, "url": "https://example.com/"},
		map[string]any{"key": "b4", "domain": "not-ours." + host, "url": "https://example.com/", "tags": []string{""}},
		5,
		map[string]any{"key": "b6", "domain": strings.ToUpper(host), "url": "https://example.com/6", "password": "pw"},
	}
	r := w.editor.do("POST", "/api/v1/links/bulk", items)
	g.Expect(r.status).To(Equal(http.StatusOK), "%s", r)
	data := r.body["data"].([]any)
	g.Expect(data).To(HaveLen(len(items)))
	var statuses []int
	for i, it := range data {
		item := it.(map[string]any)
		g.Expect(item).To(HaveKeyWithValue("index", BeNumerically("==", i)))
		statuses = append(statuses, int(item["status"].(float64)))
		if item["status"].(float64) == http.StatusCreated {
			g.Expect(item).To(HaveKey("link"))
			continue
		}
		// The single-link endpoint refuses the same body the same way.
		single := w.editor.do("POST", "/api/v1/links", items[i])
		g.Expect(single.status).To(BeNumerically("==", item["status"]), "item %d", i)
		want := map[string]any{"index": float64(i), "status": item["status"], "message": single.body["message"]}
		if errs, ok := single.body["errors"]; ok {
			want["errors"] = errs
		}
		g.Expect(item).To(Equal(want), "item %d", i)
	}
	g.Expect(statuses).To(Equal([]int{201, 422, 422, 422, 422, 400, 201}))
	g.Expect(data[2].(map[string]any)["errors"]).To(Equal(map[string]any{"key": []any{"The key has already been taken."}}))

	b0 := data[0].(map[string]any)["link"].(map[string]any)
	g.Expect(b0).To(HaveKeyWithValue("tags", []any{"imported"}))
	g.Expect(b0).To(HaveKeyWithValue("workspace_id", w.uid))
	b6 := data[6].(map[string]any)["link"].(map[string]any)
	g.Expect(b6).To(HaveKeyWithValue("password", BeNumerically("==", 1)))
	g.Expect(b6).To(HaveKeyWithValue("domain", host))
	// Readable at once (the answer waited for the lists), as a create is.
	g.Expect(w.viewer.do("GET", "/api/v1/links/lookup?domain="+host+"&key=b0", nil).body).To(Equal(b0))
	g.Expect(w.viewer.do("GET", "/api/v1/links", nil).body["meta"]).To(HaveKeyWithValue("total", BeNumerically("==", 3)))

	// Only editors create.
	g.Expect(w.viewer.do("POST", "/api/v1/links/bulk", items[:1]).status).To(Equal(http.StatusForbidden))
}

// TestBulkCreateBody: the body is an array of 1 to 100 items, up to 2 MiB;
// 100 links that would not fit the single endpoint's 64 KiB are fine.
func TestBulkCreateBody(t *testing.T) {
	testenv.Need(t)
	g := NewWithT(t)
	w, host := newWorkspaceWithDomain(t)
	for _, c := range []struct {
		body   any
		status int
		msg    string
	}{
		{"", http.StatusUnprocessableEntity, "The links field is required."},
		{"[]", http.StatusUnprocessableEntity, "The links field must have between 1 and 100 items."},
		{"{}", http.StatusBadRequest, "The request body must be a JSON array."},
		{"[{", http.StatusBadRequest, "The request body is not valid JSON."},
		{make([]map[string]any, 101), http.StatusUnprocessableEntity, "The links field must have between 1 and 100 items."},
		{"[" + strings.Repeat(`"`+strings.Repeat("x", 1<<20)+`",`, 2) + "1]", http.StatusRequestEntityTooLarge, "The request body must not be larger than 2048 KiB."},
		{"?atomic=maybe", http.StatusUnprocessableEntity, "The atomic field must be true or false."},
	} {
		path := "/api/v1/links/bulk"
		body := c.body
		if s, ok := body.(string); ok && strings.HasPrefix(s, "?") {
			path, body = path+s, "[]"
		}
		r := w.editor.do("POST", path, body)
		g.Expect(r.status).To(Equal(c.status), "%.80v: %s", c.body, r)
		g.Expect(r.body).To(HaveKeyWithValue("message", c.msg))
	}

	long := "https://example.com/" + strings.Repeat("a", 1500)
	var items []map[string]any
	for i := range 100 {
		items = append(items, map[string]any{"key": fmt.Sprintf("big%d", i), "domain": host, "url": long, "tags": []string{"big"}})
	}
	start := time.Now()
	r := w.editor.do("POST", "/api/v1/links/bulk", items)
	t.Logf("bulk create of 100 links answered in %s", time.Since(start))
	g.Expect(r.status).To(Equal(http.StatusOK), "%.300s", r)
	for i, it := range r.body["data"].([]any) {
		g.Expect(it).To(HaveKeyWithValue("status", BeNumerically("==", 201)), "item %d", i)
	}
	g.Expect(w.viewer.do("GET", "/api/v1/links?tag=big", nil).body["meta"]).To(HaveKeyWithValue("total", BeNumerically("==", 100)))
}

// TestBulkCreateAtomic: one invalid item and nothing is created.
func TestBulkCreateAtomic(t *testing.T) {
	testenv.Need(t)
	g := NewWithT(t)
	w, host := newWorkspaceWithDomain(t)
	r := w.editor.do("POST", "/api/v1/links/bulk?atomic=true", []any{
		map[string]any{"key": "ok", "domain": host, "url": "https://example.com/"},
		map[string]any{"key": "bad", "domain": host, "url": "nope"},
		map[string]any{"key": "ok", "domain": "elsewhere." + host, "url": "https://example.com/"},
		"x",
	})
	g.Expect(r.status).To(Equal(http.StatusUnprocessableEntity), "%s", r)
	g.Expect(r.body).To(Equal(map[string]any{
		"message": "3 of 4 links are invalid; none was created.",
		"errors": map[string]any{
			"1.url":    []any{"The url field must be an absolute http or https URL with a host."},
			"2.domain": []any{"The selected domain is invalid."},
			"3":        []any{"The request body must be a JSON object."},
		},
	}))
	var list kurzv1alpha1.LinkList
	g.Expect(k8s.List(context.Background(), &list, client.InNamespace(w.ns))).To(Succeed())
	g.Expect(list.Items).To(BeEmpty())
}

var denyPolicyOnce sync.Once

// installDenyPolicy installs a ValidatingAdmissionPolicy with which
// kube-apiserver refuses creates of Links whose key starts with "deny-"
// and updates of Links labelled "frozen": writes the API cannot foresee,
// failing halfway through a bulk request.
func installDenyPolicy(t *testing.T) {
	t.Helper()
	g := NewWithT(t)
	ctx := context.Background()
	denyPolicyOnce.Do(func() {
		g.Expect(k8s.Create(ctx, &admissionv1.ValidatingAdmissionPolicy{
			ObjectMeta: metav1.ObjectMeta{Name: "kurz-test-deny"},
			Spec: admissionv1.ValidatingAdmissionPolicySpec{
				FailurePolicy: ptr.To(admissionv1.Fail),
				MatchConstraints: &admissionv1.MatchResources{ResourceRules: []admissionv1.NamedRuleWithOperations{{
					RuleWithOperations: admissionv1.RuleWithOperations{
						Operations: []admissionv1.OperationType{admissionv1.Create, admissionv1.Update},
						Rule:       admissionv1.Rule{APIGroups: []string{"kurz.dev"}, APIVersions: []string{"v1alpha1"}, Resources: []string{"links"}},
					},
				}}},
				Validations: []admissionv1.Validation{
					{Expression: "request.operation != 'CREATE' || !object.spec.key.startsWith('deny-')", Message: "denied by the test policy"},
					{Expression: "request.operation != 'UPDATE' || !has(object.metadata.labels) || !('frozen' in object.metadata.labels)", Message: "frozen by the test policy"},
				},
			},
		})).To(Succeed())
		g.Expect(k8s.Create(ctx, &admissionv1.ValidatingAdmissionPolicyBinding{
			ObjectMeta: metav1.ObjectMeta{Name: "kurz-test-deny"},
			Spec: admissionv1.ValidatingAdmissionPolicyBindingSpec{
				PolicyName: "kurz-test-deny", ValidationActions: []admissionv1.ValidationAction{admissionv1.Deny},
			},
		})).To(Succeed())
	})
	probe := newWorkspace(t)
	g.Eventually(func() error {
		l := &kurzv1alpha1.Link{
			ObjectMeta: metav1.ObjectMeta{Namespace: probe.ns, GenerateName: "probe-"},
			Spec:       kurzv1alpha1.LinkSpec{Domain: "probe.example.com", Key: "deny-probe", URL: "https://example.com/"},
		}
		err := k8s.Create(ctx, l)
		if err == nil {
			_ = k8s.Delete(ctx, l)
			return fmt.Errorf("the policy is not in force yet")
		}
		return nil
	}, "30s", "200ms").Should(Succeed())
}

// TestBulkCreateAtomicUndo: kube-apiserver refuses one create halfway; the
// links the request created are deleted, and the answer says which item
// failed. Without atomic the others stay.
func TestBulkCreateAtomicUndo(t *testing.T) {
	testenv.Need(t)
	g := NewWithT(t)
	installDenyPolicy(t)
	w, host := newWorkspaceWithDomain(t)
	var items []map[string]any
	for i := range 20 {
		key := fmt.Sprintf("k%d", i)
		if i == 13 {
			key = "deny-13"
		}
		items = append(items, map[string]any{"key": key, "domain": host, "url": "https://example.com/"})
	}
	r := w.editor.do("POST", "/api/v1/links/bulk?atomic=true", items)
	g.Expect(r.status).To(Equal(http.StatusInternalServerError), "%s", r)
	g.Expect(r.body["message"]).To(MatchRegexp(`^Link 13 failed: Server Error\. None of the 20 links was kept: the \d+ created were deleted\.$`))
	var list kurzv1alpha1.LinkList
	g.Expect(k8s.List(context.Background(), &list, client.InNamespace(w.ns))).To(Succeed())
	g.Expect(list.Items).To(BeEmpty(), "nothing is left in kube-apiserver")
	g.Expect(w.viewer.do("GET", "/api/v1/links", nil).body["meta"]).To(HaveKeyWithValue("total", BeNumerically("==", 0)), "nor in the lists")

	r = w.editor.do("POST", "/api/v1/links/bulk", items)
	g.Expect(r.status).To(Equal(http.StatusOK), "%s", r)
	for i, it := range r.body["data"].([]any) {
		want := 201
		if i == 13 {
			want = 500
		}
		g.Expect(it).To(HaveKeyWithValue("status", BeNumerically("==", want)), "item %d", i)
	}
	g.Expect(w.viewer.do("GET", "/api/v1/links", nil).body["meta"]).To(HaveKeyWithValue("total", BeNumerically("==", 19)))
}

// TestBulkRateLimitCountsItems: a bulk request costs one request per item.
func TestBulkRateLimitCountsItems(t *testing.T) {
	testenv.Need(t)
	g := NewWithT(t)
	w, host := newWorkspaceWithDomain(t)
	limited := &apiClient{t: t, base: limitedURL, token: w.editor.token, forwardedFor: uniqueAddress()}
	item := func(key string) map[string]any {
		return map[string]any{"key": key, "domain": host, "url": "https://example.com/"}
	}

	r := limited.do("POST", "/api/v1/links/bulk", []any{item("a"), item("b"), item("c"), item("d")})
	expectFieldError(g, r, "links", fmt.Sprintf("The links field must not have more than %d items: the rate limit is %d a minute.", testRateLimit, testRateLimit))
	r = limited.do("POST", "/api/v1/links/bulk", []any{item("a"), item("b")})
	g.Expect(r.status).To(Equal(http.StatusOK), "%s", r)
	g.Expect(r.header.Get("X-RateLimit-Remaining")).To(Equal("0"), "the 4-item request cost 1, this one 2")
	r = limited.do("GET", "/api/v1/links", nil)
	g.Expect(r.status).To(Equal(http.StatusTooManyRequests))
	g.Expect(r.header.Get("Retry-After")).NotTo(BeEmpty())
}

// TestBulkUpdate: one change to several links, each answered on its own.
func TestBulkUpdate(t *testing.T) {
	testenv.Need(t)
	g := NewWithT(t)
	w, host := newWorkspaceWithDomain(t)
	mk := func(key string, tags []string) map[string]any {
		return w.createLink(t, map[string]any{"key": key, "domain": host, "url": "https://example.com/" + key, "tags": tags})
	}
	a, b, c := mk("a", []string{"x"}), mk("b", []string{"x", "y"}), mk("c", nil)
	var full []string
	for i := range 32 {
		full = append(full, fmt.Sprintf("f%d", i))
	}
	d := mk("d", full)
	other, otherHost := newWorkspaceWithDomain(t)
	foreign := other.createLink(t, map[string]any{"key": "a", "domain": otherHost, "url": "https://example.com/"})
	unknown := "00000000-0000-4000-8000-000000000000"
	id := func(l map[string]any) string { return l["id"].(string) }

	r := w.editor.do("PATCH", "/api/v1/links/bulk", map[string]any{
		"ids":      []string{id(a), strings.ToUpper(id(b)), id(c), id(foreign), unknown, id(d)},
		"set":      map[string]any{"expires_at": "2030-01-01T00:00:00Z", "utm_source": "bulk", "ios": nil},
		"add_tags": []string{"new"}, "remove_tags": []string{"x"},
	})
	g.Expect(r.status).To(Equal(http.StatusOK), "%s", r)
	data := r.body["data"].([]any)
	wantTags := [][]any{{"new"}, {"y", "new"}, {"new"}}
	for i, l := range []map[string]any{a, b, c} {
		item := data[i].(map[string]any)
		g.Expect(item).To(HaveKeyWithValue("status", BeNumerically("==", 200)), "item %d", i)
		link := item["link"].(map[string]any)
		g.Expect(link).To(HaveKeyWithValue("tags", wantTags[i]))
		g.Expect(link).To(HaveKeyWithValue("expires_at", "2030-01-01T00:00:00.000000Z"))
		g.Expect(link).To(HaveKeyWithValue("utm_source", "bulk"))
		g.Expect(link).To(HaveKeyWithValue("url", l["url"]), "kept")
		g.Expect(link["updated_at"].(string) > l["updated_at"].(string)).To(BeTrue(), "updated_at refreshed")
		g.Expect(w.viewer.do("GET", "/api/v1/links/"+id(l), nil).body).To(Equal(link), "readable at once")
	}
	g.Expect(data[1]).To(HaveKeyWithValue("id", strings.ToUpper(id(b))), "ids are answered as given")
	for _, i := range []int{3, 4} {
		g.Expect(data[i]).To(Equal(map[string]any{"index": float64(i), "id": []string{id(foreign), unknown}[i-3], "status": float64(404), "message": "Link not found."}))
	}
	g.Expect(data[5]).To(Equal(map[string]any{"index": float64(5), "id": id(d), "status": float64(422),
		"message": "The tags field must not have more than 32 items.",
		"errors":  map[string]any{"tags": []any{"The tags field must not have more than 32 items."}}}))

	for _, c := range []struct {
		body       map[string]any
		field, msg string
	}{
		{map[string]any{"ids": []string{id(a)}, "set": map[string]any{"key": "z"}}, "set.key", "The key field is prohibited."},
		{map[string]any{"ids": []string{id(a)}, "set": map[string]any{"url": nil}}, "set.url", "The url field must not be empty."},
		{map[string]any{"ids": []string{id(a)}, "set": map[string]any{"url": "ftp://x"}}, "set.url", "The url field must be an absolute http or https URL with a host."},
		{map[string]any{"ids": []string{id(a)}, "set": 3}, "set", "The set field must be an object."},
		{map[string]any{"ids": []string{id(a)}}, "set", "The set field is required when add tags and remove tags are not present."},
		{map[string]any{"ids": []string{id(a)}, "add_tags": []string{""}}, "add_tags.0", "The add tags.0 field must not be empty."},
		{map[string]any{"ids": []string{id(a), id(a)}, "add_tags": []string{"t"}}, "ids.1", "The ids.1 field has a duplicate value."},
		{map[string]any{"add_tags": []string{"t"}}, "ids", "The ids field is required."},
		{map[string]any{"ids": []string{}, "add_tags": []string{"t"}}, "ids", "The ids field must have between 1 and 100 items."},
		{map[string]any{"ids": "x", "add_tags": []string{"t"}}, "ids", "The ids field must be an array."},
	} {
		expectFieldError(g, w.editor.do("PATCH", "/api/v1/links/bulk", c.body), c.field, c.msg)
	}

	// Atomic: one id that is not the workspace's, and nothing changes.
	r = w.editor.do("PATCH", "/api/v1/links/bulk?atomic=true", map[string]any{"ids": []string{id(a), id(foreign)}, "add_tags": []string{"atomic"}})
	g.Expect(r.status).To(Equal(http.StatusUnprocessableEntity), "%s", r)
	g.Expect(r.body).To(Equal(map[string]any{"message": "1 of 2 links are invalid; none was changed.",
		"errors": map[string]any{"1.id": []any{"Link not found."}}}))
	g.Expect(w.viewer.do("GET", "/api/v1/links/"+id(a), nil).body["tags"]).To(Equal([]any{"new"}))
	g.Expect(w.viewer.do("PATCH", "/api/v1/links/bulk", map[string]any{"ids": []string{id(a)}, "add_tags": []string{"t"}}).status).To(Equal(http.StatusForbidden))
}

// TestBulkUpdateAtomicRestores: kube-apiserver refuses one update halfway;
// the links already changed get their spec back.
func TestBulkUpdateAtomicRestores(t *testing.T) {
	testenv.Need(t)
	g := NewWithT(t)
	installDenyPolicy(t)
	ctx := context.Background()
	w, host := newWorkspaceWithDomain(t)
	var ids []string
	for i := range 6 {
		ids = append(ids, w.createLink(t, map[string]any{"key": fmt.Sprintf("r%d", i), "domain": host, "url": "https://example.com/", "tags": []string{"keep"}})["id"].(string))
	}
	frozen := &kurzv1alpha1.Link{
		ObjectMeta: metav1.ObjectMeta{Namespace: w.ns, Name: "frozen", Labels: map[string]string{"frozen": "yes"}},
		Spec:       kurzv1alpha1.LinkSpec{Domain: kurzv1alpha1.Hostname(host), Key: "frozen", URL: "https://example.com/"},
	}
	g.Expect(k8s.Create(ctx, frozen)).To(Succeed())
	waitForTotal(t, w.viewer, 7)
	ids = slices.Insert(ids, 3, string(frozen.UID))

	r := w.editor.do("PATCH", "/api/v1/links/bulk?atomic=true", map[string]any{"ids": ids, "set": map[string]any{"url": "https://example.com/changed"}, "add_tags": []string{"gone"}})
	g.Expect(r.status).To(Equal(http.StatusInternalServerError), "%s", r)
	g.Expect(r.body["message"]).To(MatchRegexp(`^Link 3 failed: Server Error\. None of the 7 links was changed: the \d+ changed were restored\.$`))
	for _, id := range ids {
		l := w.viewer.do("GET", "/api/v1/links/"+id, nil).body
		g.Expect(l).To(HaveKeyWithValue("url", "https://example.com/"), id)
		g.Expect(l["tags"]).NotTo(ContainElement("gone"), id)
	}
}

// TestBulkDelete: each id deleted or answered 404; the lists follow at once.
func TestBulkDelete(t *testing.T) {
	testenv.Need(t)
	g := NewWithT(t)
	w, host := newWorkspaceWithDomain(t)
	a := w.createLink(t, map[string]any{"key": "a", "domain": host, "url": "https://example.com/"})
	b := w.createLink(t, map[string]any{"key": "b", "domain": host, "url": "https://example.com/"})
	other, otherHost := newWorkspaceWithDomain(t)
	foreign := other.createLink(t, map[string]any{"key": "a", "domain": otherHost, "url": "https://example.com/"})
	ids := []string{a["id"].(string), "not-a-uuid", foreign["id"].(string), b["id"].(string)}

	g.Expect(w.viewer.do("DELETE", "/api/v1/links/bulk", map[string]any{"ids": ids}).status).To(Equal(http.StatusForbidden))
	r := w.editor.do("DELETE", "/api/v1/links/bulk", map[string]any{"ids": ids})
	g.Expect(r.status).To(Equal(http.StatusOK), "%s", r)
	var statuses []float64
	for i, it := range r.body["data"].([]any) {
		item := it.(map[string]any)
		g.Expect(item).To(HaveKeyWithValue("id", ids[i]))
		statuses = append(statuses, item["status"].(float64))
	}
	g.Expect(statuses).To(Equal([]float64{200, 404, 404, 200}))
	g.Expect(r.body["data"].([]any)[0]).To(HaveKeyWithValue("message", "Link deleted successfully."))
	g.Expect(w.viewer.do("GET", "/api/v1/links", nil).body["meta"]).To(HaveKeyWithValue("total", BeNumerically("==", 0)))
	g.Expect(other.viewer.do("GET", "/api/v1/links", nil).body["meta"]).To(HaveKeyWithValue("total", BeNumerically("==", 1)), "another workspace's link stays")
	expectFieldError(g, w.editor.do("DELETE", "/api/v1/links/bulk", map[string]any{"ids": []string{"x", "X"}}), "ids.1", "The ids.1 field has a duplicate value.")
}
