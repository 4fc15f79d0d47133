package redirect

import (
	"context"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// at is o at resourceVersion rv.
func at[T client.Object](o T, rv string) T {
	o.SetResourceVersion(rv)
	return o
}

// TestIndexWaitFor: the API's writers wait on the index until it holds
// their write, and only as long as that.
func TestIndexWaitFor(t *testing.T) {
	g := NewWithT(t)
	ix := NewIndex()
	// With a cancelled context WaitFor answers at once: nil when the index
	// holds the write, the context's error when it does not.
	gone, cancel := context.WithCancel(t.Context())
	cancel()
	holds := func(o client.Object, rv string, deleted bool) bool {
		return ix.WaitFor(gone, o, rv, deleted) == nil
	}

	d := at(testDomain("a", "d", "go.test", 1), "3")
	l := at(testLink("a", "l", "go.test", "k", 2), "5")
	g.Expect(holds(d, "3", false)).To(BeFalse())
	g.Expect(holds(l, "5", false)).To(BeFalse())
	g.Expect(holds(l, "", true)).To(BeTrue(), "a Link never taken is not held")

	// A waiter blocks until the write arrives; the redirect serves it then.
	done := make(chan error, 2)
	go func() { done <- ix.WaitFor(t.Context(), d, "3", false) }()
	go func() { done <- ix.WaitFor(t.Context(), l, "5", false) }()
	ix.UpsertDomain(d)
	ix.UpsertLink(l)
	for range 2 {
		g.Eventually(done, 20*time.Second).Should(Receive(BeNil()))
	}
	g.Expect(served(ix, "go.test", "k")).To(Equal("https://dest.example/a/l"))

	// An update: held once the index took the Link's events up to its
	// resourceVersion, not at an older one of the same uid.
	moved := at(testLink("a", "l", "go.test", "k", 2), "8")
	moved.Spec.URL = "https://dest.example/moved"
	g.Expect(holds(moved, "8", false)).To(BeFalse())
	ix.UpsertLink(at(testLink("a", "l", "go.test", "k", 2), "7"))
	g.Expect(holds(moved, "8", false)).To(BeFalse())
	ix.UpsertLink(moved)
	g.Expect(holds(moved, "8", false)).To(BeTrue())
	g.Expect(served(ix, "go.test", "k")).To(Equal("https://dest.example/moved"))
	// Events come in resourceVersion order: having taken another Link's
	// at 9, the index has every write up to 9.
	ix.UpsertLink(at(testLink("a", "other", "go.test", "o", 2), "9"))
	g.Expect(holds(moved, "9", false)).To(BeTrue())
	g.Expect(holds(moved, "10", false)).To(BeFalse())
	g.Expect(holds(d, "9", false)).To(BeFalse(), "Domains are followed apart from Links")

	// A Link deleted and created again under its name is another uid:
	// neither wait ends on the other's record.
	again := at(testLink("a", "l", "go.test", "k", 3), "11")
	again.UID = types.UID("a/l-again")
	g.Expect(holds(again, "11", false)).To(BeFalse())
	go func() { done <- ix.WaitFor(t.Context(), moved, "", true) }()
	ix.DeleteLink(types.NamespacedName{Namespace: "a", Name: "l"})
	g.Eventually(done, 20*time.Second).Should(Receive(BeNil()))
	g.Expect(served(ix, "go.test", "k")).To(BeEmpty())
	ix.UpsertLink(again)
	g.Expect(holds(again, "11", false)).To(BeTrue())
	g.Expect(holds(moved, "", true)).To(BeTrue(), "the old uid stays gone")
	g.Expect(holds(again, "", true)).To(BeFalse())

	// A Domain's delete, and a status write that changes nothing the index
	// serves from, which still counts as taken.
	g.Expect(holds(d, "", true)).To(BeFalse())
	ix.UpsertDomain(at(testDomain("a", "d", "go.test", 1), "12"))
	g.Expect(holds(d, "12", false)).To(BeTrue())
	ix.DeleteDomain(types.NamespacedName{Namespace: "a", Name: "d"})
	g.Expect(holds(d, "", true)).To(BeTrue())

	// A bad resourceVersion is an error; kinds the index does not hold
	// are not waited for.
	g.Expect(ix.WaitFor(t.Context(), l, "x", false)).To(MatchError(ContainSubstring("not a number")))
	g.Expect(holds(&corev1.Secret{}, "1", false)).To(BeTrue())
}
