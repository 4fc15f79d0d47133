package redirect

import (
	"context"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kurz-dev/kurz/internal/visibility"
)

// at is o at resourceVersion rv.
func at[T client.Object](o T, rv string) T {
	o.SetResourceVersion(rv)
	return o
}

// TestIndexWaitFor: the API's writers wait on the index until it has
// their write, and only as long as that.
func TestIndexWaitFor(t *testing.T) {
	g := NewWithT(t)
	ix := NewIndex()
	// With a cancelled context WaitFor answers at once: nil when the index
	// has the write, the context's error when it has not.
	gone, cancel := context.WithCancel(t.Context())
	cancel()
	holds := func(o client.Object, rv string, deleted bool) bool {
		return ix.WaitFor(gone, o, rv, deleted) == nil
	}
	// waitFor starts a WaitFor on tr and returns once it is blocked.
	waitFor := func(tr *visibility.Tracker, o client.Object, rv string, deleted bool) <-chan error {
		done := make(chan error, 1)
		go func() { done <- ix.WaitFor(t.Context(), o, rv, deleted) }()
		g.Eventually(tr.Waiting, 20*time.Second).Should(BeTrue())
		return done
	}
	links, domains := ix.linksTaken.writes, ix.domainsTaken.writes

	d := at(testDomain("a", "d", "go.test", 1), "3")
	l := at(testLink("a", "l", "go.test", "k", 2), "5")
	g.Expect(holds(d, "3", false)).To(BeFalse())
	g.Expect(holds(l, "5", false)).To(BeFalse())
	g.Expect(holds(l, "", true)).To(BeFalse(), "a delete waits until the index is past the Link's version: its create may still be on the way")

	// A blocked waiter returns on the write; the redirect serves it then.
	done := waitFor(domains, d, "3", false)
	ix.UpsertDomain(d)
	g.Eventually(done, 20*time.Second).Should(Receive(BeNil()))
	done = waitFor(links, l, "5", false)
	ix.UpsertLink(l)
	g.Eventually(done, 20*time.Second).Should(Receive(BeNil()))
	g.Expect(served(ix, "go.test", "k")).To(Equal("https://dest.example/a/l"))

	// An update: held once the index has taken the Links' events up to its
	// resourceVersion, not at an older one.
	moved := at(testLink("a", "l", "go.test", "k", 2), "8")
	moved.Spec.URL = "https://dest.example/moved"
	done = waitFor(links, moved, "8", false)
	ix.UpsertLink(at(testLink("a", "l", "go.test", "k", 2), "7"))
	g.Eventually(links.Waiting, 20*time.Second).Should(BeTrue(), "still waiting after version 7")
	g.Expect(done).NotTo(Receive())
	ix.UpsertLink(moved)
	g.Eventually(done, 20*time.Second).Should(Receive(BeNil()))
	g.Expect(served(ix, "go.test", "k")).To(Equal("https://dest.example/moved"))
	// Events come in resourceVersion order: having taken another Link's
	// at 9, the index has every Link write up to 9.
	ix.UpsertLink(at(testLink("a", "other", "go.test", "o", 2), "9"))
	g.Expect(holds(moved, "9", false)).To(BeTrue())
	g.Expect(holds(moved, "10", false)).To(BeFalse())
	g.Expect(holds(d, "9", false)).To(BeFalse(), "Domains are followed apart from Links")

	// A delete: held once the record of the uid is gone.
	g.Expect(holds(moved, "", true)).To(BeFalse())
	done = waitFor(links, moved, "", true)
	ix.DeleteLink(types.NamespacedName{Namespace: "a", Name: "l"})
	g.Eventually(done, 20*time.Second).Should(Receive(BeNil()))
	g.Expect(served(ix, "go.test", "k")).To(BeEmpty())
	g.Expect(holds(moved, "8", false)).To(BeTrue(), "a write the index is past counts as had, record or not (a finalizer lifted since)")

	// Created again under its name, it is another uid: the old uid's
	// delete stays had, the new one's is not.
	again := at(testLink("a", "l", "go.test", "k", 3), "11")
	again.UID = types.UID("a/l-again")
	ix.UpsertLink(again)
	g.Expect(holds(moved, "", true)).To(BeTrue())
	g.Expect(holds(again, "", true)).To(BeFalse())

	// A Link this index never had, at a version it is past, is deleted.
	never := at(testLink("a", "never", "go.test", "n", 3), "10")
	g.Expect(holds(never, "", true)).To(BeTrue())

	// A Domain: a status write that changes nothing the index serves from
	// still counts as taken; then its delete.
	g.Expect(holds(d, "12", false)).To(BeFalse())
	ix.UpsertDomain(at(testDomain("a", "d", "go.test", 1), "12"))
	g.Expect(holds(d, "12", false)).To(BeTrue())
	done = waitFor(domains, d, "", true)
	ix.DeleteDomain(types.NamespacedName{Namespace: "a", Name: "d"})
	g.Eventually(done, 20*time.Second).Should(Receive(BeNil()))

	// A bad resourceVersion is an error; kinds the index does not hold
	// are not waited for.
	g.Expect(ix.WaitFor(t.Context(), l, "x", false)).To(MatchError(ContainSubstring("not a number")))
	g.Expect(holds(&corev1.Secret{}, "1", false)).To(BeTrue())
}
