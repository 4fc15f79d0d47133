package restapi

import (
	"context"
	"net/http"
	"testing"

	"github.com/kurz-dev/kurz/internal/testenv"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kurzv1alpha1 "github.com/kurz-dev/kurz/api/v1alpha1"
)

// TestKubectlInterop: the API and kubectl (here the controller-runtime
// client, talking to kube-apiserver directly) see the same objects.
func TestKubectlInterop(t *testing.T) {
	testenv.Need(t)
	g := NewWithT(t)
	ctx := context.Background()
	w, host := newWorkspaceWithDomain(t)

	applied := &kurzv1alpha1.Link{
		ObjectMeta: metav1.ObjectMeta{Namespace: w.ns, Name: "from-kubectl"},
		Spec: kurzv1alpha1.LinkSpec{
			Domain: kurzv1alpha1.Hostname(host), Key: "kubectl", URL: "https://example.com/k",
			Tags: []string{"gitops"},
		},
	}
	g.Expect(k8s.Create(ctx, applied)).To(Succeed())
	id := string(applied.UID)
	g.Eventually(func() int { return w.viewer.do("GET", "/api/v1/links/"+id, nil).status }, "20s").Should(Equal(http.StatusOK))
	shown := w.viewer.do("GET", "/api/v1/links/"+id, nil).body
	g.Expect(shown).To(HaveKeyWithValue("key", "kubectl"))
	g.Expect(shown).To(HaveKeyWithValue("tags", ConsistOf("gitops")))
	g.Expect(shown).To(HaveKeyWithValue("link", "https://"+host+"/kubectl"))
	// Not stamped by anyone (no controller here): times fall back to the
	// creation time, still in the API format.
	g.Expect(shown["created_at"]).To(MatchRegexp(microTimestamp.String()))
	g.Expect(w.viewer.do("GET", "/api/v1/links", nil).body["data"]).To(ContainElement(HaveKeyWithValue("id", id)))

	// Its key is taken for the API too.
	r := w.editor.do("POST", "/api/v1/links", map[string]any{"key": "kubectl", "domain": host, "url": "https://example.com"})
	g.Expect(r.fieldErrors("key")).To(Equal([]string{"The key has already been taken."}))

	// And a link made by the API is a Link for kubectl.
	made := w.createLink(t, map[string]any{"key": "from-api", "domain": host, "url": "https://example.com/a"})
	var list kurzv1alpha1.LinkList
	g.Expect(k8s.List(ctx, &list, client.InNamespace(w.ns))).To(Succeed())
	var keys []string
	for _, l := range list.Items {
		keys = append(keys, l.Spec.Key)
		if string(l.UID) == made["id"].(string) {
			g.Expect(string(l.Spec.URL)).To(Equal("https://example.com/a"))
		}
	}
	g.Expect(keys).To(ConsistOf("kubectl", "from-api"))

	// kubectl deletes; the API follows.
	g.Expect(k8s.Delete(ctx, applied)).To(Succeed())
	g.Eventually(func() int { return w.viewer.do("GET", "/api/v1/links/"+id, nil).status }, "20s").Should(Equal(http.StatusNotFound))
}
