package restapi

import (
	"context"
	"fmt"
	"net/http"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kurzv1alpha1 "github.com/kurz-dev/kurz/api/v1alpha1"
	"github.com/kurz-dev/kurz/internal/testenv"
	"github.com/kurz-dev/kurz/internal/timestamps"
)

// A Link created through the API (alone or in bulk) costs the API one
// write to kube-apiserver, the create: its created/updated times travel in
// the object (kurzv1alpha1.LinkCreatedAtAnnotation) to the controller's
// first status write (controllers' TestLinkFirstStatusWriteCarriesThe
// AnnouncedTime), not in a status write of the API's. The answers show the
// same times before that write (this suite runs no controller) and after.
func TestCreatesWriteOnceALink(t *testing.T) {
	testenv.Need(t)
	g := NewWithT(t)
	w, host := newWorkspaceWithDomain(t)

	before := linkWrites.of(w.ns)
	created := w.createLink(t, map[string]any{"key": "once", "domain": host, "url": "https://example.com/once"})
	g.Expect(linkWrites.of(w.ns)-before).To(Equal(1), "POST /api/v1/links: the create and nothing else")

	const n = 10
	items := make([]any, n)
	for i := range items {
		items[i] = map[string]any{"key": fmt.Sprintf("bulk-%d", i), "domain": host, "url": "https://example.com/bulk"}
	}
	before = linkWrites.of(w.ns)
	r := w.editor.do("POST", "/api/v1/links/bulk", items)
	g.Expect(r.status).To(Equal(http.StatusOK), "%s", r)
	g.Expect(linkWrites.of(w.ns)-before).To(Equal(n), "POST /api/v1/links/bulk: one create a link and nothing else")

	answers := []map[string]any{created}
	for _, it := range r.body["data"].([]any) {
		item := it.(map[string]any)
		g.Expect(item).To(HaveKeyWithValue("status", BeNumerically("==", http.StatusCreated)))
		answers = append(answers, item["link"].(map[string]any))
	}
	for _, a := range answers {
		id := a["id"].(string)
		g.Expect(a["created_at"]).To(MatchRegexp(microTimestamp.String()))
		g.Expect(a["updated_at"]).To(Equal(a["created_at"]))
		obj := linkObject(t, w.ns, id)
		g.Expect(obj.Annotations).To(HaveKeyWithValue(kurzv1alpha1.LinkCreatedAtAnnotation, a["created_at"]))
		g.Expect(obj.Status.CreatedAt).To(BeNil(), "no status write of the API's")
		g.Expect(w.viewer.do("GET", "/api/v1/links/"+id, nil).body).To(Equal(a), "read from the annotation")
	}
	wantList := make([]any, len(answers))
	for i, a := range answers {
		wantList[len(answers)-1-i] = a
	}
	g.Expect(w.viewer.do("GET", "/api/v1/links", nil).body["data"]).To(ConsistOf(wantList...))

	// The controller's first status write, late (a bulk import settles
	// over minutes): it records the announced time, and the answers stay
	// what the create answered. A click count in the same patch shows when
	// the cache holds it.
	obj := linkObject(t, w.ns, created["id"].(string))
	orig := obj.DeepCopy()
	g.Expect(timestamps.StampLink(obj, time.Now().Add(time.Hour))).To(BeTrue())
	obj.Status.Clicks = 1
	g.Expect(k8s.Status().Patch(context.Background(), obj, client.MergeFrom(orig))).To(Succeed())
	g.Expect(obj.Status.CreatedAt.UTC().Format(timestamps.Format)).To(Equal(created["created_at"]))
	g.Expect(obj.Status.UpdatedAt.UTC().Format(timestamps.Format)).To(Equal(created["updated_at"]))
	want := map[string]any{}
	for k, v := range created {
		want[k] = v
	}
	want["clicks"] = float64(1)
	g.Eventually(func() map[string]any {
		return w.viewer.do("GET", "/api/v1/links/"+created["id"].(string), nil).body
	}, 10*time.Second, 20*time.Millisecond).Should(Equal(want))
	g.Expect(w.viewer.do("GET", "/api/v1/links", nil).body["data"]).To(ContainElement(want))
}
