package webhooks

import (
	"testing"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	toolscache "k8s.io/client-go/tools/cache"

	kurzv1alpha1 "github.com/kurz-dev/kurz/api/v1alpha1"
)

// TestLinksInNeedsNoNamespaceIndex: the leader's replay finds the Links of
// the namespaces with Webhooks in a store without a namespace index, as
// the manager's Link informer is.
func TestLinksInNeedsNoNamespaceIndex(t *testing.T) {
	g := NewWithT(t)
	store := toolscache.NewIndexer(toolscache.MetaNamespaceKeyFunc, toolscache.Indexers{})
	for _, l := range []struct{ ns, name string }{{"a", "1"}, {"a", "2"}, {"b", "3"}, {"c", "4"}} {
		g.Expect(store.Add(&kurzv1alpha1.Link{ObjectMeta: metav1.ObjectMeta{Namespace: l.ns, Name: l.name}})).To(Succeed())
	}
	names := func(ls []*kurzv1alpha1.Link) []string {
		out := []string{}
		for _, l := range ls {
			out = append(out, l.Name)
		}
		return out
	}
	got := linksIn(store, []string{"a", "c", "d"})
	g.Expect(got).To(HaveLen(3))
	g.Expect(names(got["a"])).To(ConsistOf("1", "2"))
	g.Expect(names(got["c"])).To(ConsistOf("4"))
	g.Expect(got["d"]).To(BeEmpty())
	g.Expect(got).NotTo(HaveKey("b"))
	g.Expect(linksIn(store, nil)).To(BeEmpty())
}
