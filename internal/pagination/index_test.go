package pagination

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"

	kurzv1alpha1 "github.com/kurz-dev/kurz/api/v1alpha1"
)

// A controller-runtime informer is what the API server registers.
var _ EventSource = cache.Informer(nil)

var base = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

func createdAt(l *kurzv1alpha1.Link) time.Time {
	if l.Status.CreatedAt != nil {
		return l.Status.CreatedAt.Time
	}
	return l.CreationTimestamp.Time
}

// link makes a Link created at base + us microseconds.
func link(ns, uid string, us int, rv int) *kurzv1alpha1.Link {
	t := metav1.NewMicroTime(base.Add(time.Duration(us) * time.Microsecond))
	return &kurzv1alpha1.Link{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "l-" + uid, UID: types.UID(uid), ResourceVersion: strconv.Itoa(rv)},
		Status:     kurzv1alpha1.LinkStatus{CreatedAt: &t},
	}
}

func uids(ls []*kurzv1alpha1.Link) []string {
	out := make([]string, len(ls))
	for i, l := range ls {
		out[i] = string(l.UID)
	}
	return out
}

// indexOf returns an index holding links, upserted in that order.
func indexOf(links ...*kurzv1alpha1.Link) *Index[*kurzv1alpha1.Link] {
	ix := NewIndex(createdAt)
	for _, l := range links {
		ix.Upsert(l)
	}
	return ix
}

// expectFirstPage checks the first page (25 per page) of namespace ns:
// as many items in total as want, and their uids in want's order.
func expectFirstPage(g Gomega, ix *Index[*kurzv1alpha1.Link], ns string, want ...string) {
	items, total := ix.Page(ns, 0, 25)
	g.Expect(total).To(Equal(len(want)))
	g.Expect(uids(items)).To(Equal(want))
}

func TestIndexOrder(t *testing.T) {
	g := NewWithT(t)
	ix := indexOf(
		link("a", "u1", 10, 1),
		link("a", "u2", 30, 2),
		link("a", "u3", 20, 3),
		// Ties on the created time: uid descending.
		link("a", "u5", 20, 4),
		link("a", "u4", 20, 5),
	)
	expectFirstPage(g, ix, "a", "u2", "u5", "u4", "u3", "u1")

	items, total := ix.Page("a", 1, 2)
	g.Expect(total).To(Equal(5))
	g.Expect(uids(items)).To(Equal([]string{"u5", "u4"}))

	items, _ = ix.Page("a", 4, 25)
	g.Expect(uids(items)).To(Equal([]string{"u1"}))

	items, total = ix.Page("a", 5, 25)
	g.Expect(total).To(Equal(5))
	g.Expect(items).To(BeEmpty())
	g.Expect(items).NotTo(BeNil())

	items, _ = ix.Page("a", -1, 1)
	g.Expect(uids(items)).To(Equal([]string{"u2"}))
	items, _ = ix.Page("a", 0, 0)
	g.Expect(items).To(BeEmpty())
}

func TestIndexNamespaces(t *testing.T) {
	g := NewWithT(t)
	ix := indexOf(link("a", "u1", 1, 1), link("b", "u2", 2, 2), link("b", "u3", 3, 3))

	expectFirstPage(g, ix, "a", "u1")
	expectFirstPage(g, ix, "b", "u3", "u2")
	items, total := ix.Page("c", 0, 25)
	g.Expect(total).To(BeZero())
	g.Expect(items).NotTo(BeNil())
}

func TestIndexMovesAndReplaces(t *testing.T) {
	g := NewWithT(t)
	ix := indexOf(link("a", "u1", 10, 1), link("a", "u2", 20, 2))

	// The API stamps status.createdAt after create: the item moves.
	ix.Upsert(link("a", "u1", 30, 3))
	expectFirstPage(g, ix, "a", "u1", "u2")

	// Same key, new object: the pointer is replaced in place.
	newer := link("a", "u2", 20, 4)
	ix.Upsert(newer)
	items, _ := ix.Page("a", 0, 25)
	g.Expect(items[1]).To(BeIdenticalTo(newer))
	got, ok := ix.Get("u2")
	g.Expect(ok).To(BeTrue())
	g.Expect(got).To(BeIdenticalTo(newer))

	// An older resourceVersion never replaces a newer one.
	ix.Upsert(link("a", "u2", 5, 3))
	items, _ = ix.Page("a", 0, 25)
	g.Expect(items[1]).To(BeIdenticalTo(newer))

	// A namespace change (only possible by delete and re-create with the
	// same uid in tests) moves it between trees.
	ix.Upsert(link("b", "u2", 20, 5))
	_, total := ix.Page("a", 0, 25)
	g.Expect(total).To(Equal(1))
	_, total = ix.Page("b", 0, 25)
	g.Expect(total).To(Equal(1))
}

func TestIndexDelete(t *testing.T) {
	g := NewWithT(t)
	ix := indexOf(link("a", "u1", 10, 1), link("a", "u2", 20, 2))

	// The delete event's object may be stale (other created time).
	ix.Delete(link("a", "u1", 999, 7))
	expectFirstPage(g, ix, "a", "u2")

	ix.Delete(link("a", "nope", 1, 1)) // unknown: no-op
	ix.Delete(link("a", "u2", 20, 3))
	_, total := ix.Page("a", 0, 25)
	g.Expect(total).To(BeZero())
	_, ok := ix.Get("u2")
	g.Expect(ok).To(BeFalse())
}

// fakeInformer hands the registered handler to the test.
type fakeInformer struct {
	h toolscache.ResourceEventHandler
}

func (f *fakeInformer) AddEventHandler(h toolscache.ResourceEventHandler) (toolscache.ResourceEventHandlerRegistration, error) {
	f.h = h
	return nil, nil
}

func TestIndexRegister(t *testing.T) {
	g := NewWithT(t)
	ix := NewIndex(createdAt)
	inf := &fakeInformer{}
	g.Expect(ix.Register(inf)).To(Succeed())

	inf.h.OnAdd(link("a", "u1", 10, 1), true)
	inf.h.OnAdd(link("a", "u2", 20, 2), false)
	inf.h.OnAdd("not a link", false) // ignored
	inf.h.OnUpdate(link("a", "u1", 10, 1), link("a", "u1", 30, 3))
	items, _ := ix.Page("a", 0, 25)
	g.Expect(uids(items)).To(Equal([]string{"u1", "u2"}))

	inf.h.OnDelete(link("a", "u1", 30, 4))
	inf.h.OnDelete(toolscache.DeletedFinalStateUnknown{Key: "a/l-u2", Obj: link("a", "u2", 20, 2)})
	_, total := ix.Page("a", 0, 25)
	g.Expect(total).To(BeZero())
}

// recordingSink remembers the events it was fed, and what ix held then.
type recordingSink struct {
	ix     *Index[*kurzv1alpha1.Link]
	events []string
}

func (r *recordingSink) Upsert(l *kurzv1alpha1.Link) {
	_, total := r.ix.Page("a", 0, 0)
	r.events = append(r.events, fmt.Sprintf("upsert %s (index holds %d)", l.UID, total))
}

func (r *recordingSink) Delete(l *kurzv1alpha1.Link) {
	r.events = append(r.events, "delete "+string(l.UID))
}

// Sinks registered together see every event, in their order: one fed
// before the index has each event before the index does.
func TestRegisterSinks(t *testing.T) {
	g := NewWithT(t)
	ix := NewIndex(createdAt)
	rec := &recordingSink{ix: ix}
	inf := &fakeInformer{}
	g.Expect(Register[*kurzv1alpha1.Link](inf, nil, rec, ix)).To(Succeed())
	inf.h.OnAdd(link("a", "u1", 10, 1), true)
	inf.h.OnUpdate(link("a", "u1", 10, 1), link("a", "u1", 30, 3))
	inf.h.OnAdd("not a link", false)
	inf.h.OnDelete(toolscache.DeletedFinalStateUnknown{Key: "a/l-u1", Obj: link("a", "u1", 30, 3)})
	g.Expect(rec.events).To(Equal([]string{"upsert u1 (index holds 0)", "upsert u1 (index holds 1)", "delete u1"}))
	_, total := ix.Page("a", 0, 25)
	g.Expect(total).To(BeZero())
}

// TestIndexRandom checks the tree against a sorted reference through many
// random inserts, moves and deletes, which exercise splits, merges and
// root changes.
func TestIndexRandom(t *testing.T) {
	g := NewWithT(t)
	rng := rand.New(rand.NewPCG(1, 2))
	ix := NewIndex(createdAt)
	ref := map[string]*kurzv1alpha1.Link{}
	rv := 0
	check := func() {
		want := make([]*kurzv1alpha1.Link, 0, len(ref))
		for _, l := range ref {
			want = append(want, l)
		}
		slices.SortFunc(want, func(a, b *kurzv1alpha1.Link) int {
			if c := createdAt(b).Compare(createdAt(a)); c != 0 {
				return c
			}
			return -compareStrings(string(a.UID), string(b.UID))
		})
		got, total := ix.Page("ns", 0, len(ref)+10)
		g.Expect(total).To(Equal(len(ref)))
		g.Expect(uids(got)).To(Equal(uids(want)))
		for _, off := range []int{0, 1, 25, len(ref) / 2, len(ref) - 1} {
			if off < 0 {
				continue
			}
			page, _ := ix.Page("ns", off, 25)
			g.Expect(uids(page)).To(Equal(uids(want[min(off, len(want)):min(off+25, len(want))])), "offset %d", off)
		}
		checkTree(t, ix.trees["ns"])
		for uid, l := range ref {
			got, ok := ix.Get(types.UID(uid))
			g.Expect(ok).To(BeTrue())
			g.Expect(got).To(BeIdenticalTo(l))
		}
	}
	for round := range 6 {
		// Grow, then shrink, several times over.
		n := 3000
		if round%2 == 1 {
			n = 2500
		}
		for range n {
			rv++
			uid := fmt.Sprintf("u%05d", rng.IntN(6000))
			switch _, exists := ref[uid]; {
			case round%2 == 1 && exists:
				ix.Delete(ref[uid])
				delete(ref, uid)
			case round%2 == 0 || exists:
				l := link("ns", uid, rng.IntN(500), rv) // many ties
				ix.Upsert(l)
				ref[uid] = l
			}
		}
		check()
	}
	for uid, l := range ref {
		ix.Delete(l)
		delete(ref, uid)
	}
	check()
	g.Expect(ix.trees).NotTo(HaveKey("ns"))
}

func compareStrings(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// checkTree verifies counts, capacities and key order of a tree.
func checkTree(t *testing.T, tr *tree[*kurzv1alpha1.Link]) {
	t.Helper()
	if tr == nil {
		return
	}
	var prev *sortKey
	var walk func(n *node[*kurzv1alpha1.Link], lo, hi *sortKey) int
	walk = func(n *node[*kurzv1alpha1.Link], lo, hi *sortKey) int {
		if n.leaf() {
			if len(n.entries) > maxEntries {
				t.Fatalf("leaf with %d entries", len(n.entries))
			}
			for _, e := range n.entries {
				if lo != nil && e.compare(*lo) < 0 || hi != nil && e.compare(*hi) >= 0 {
					t.Fatalf("key outside its separators")
				}
				if prev != nil && prev.compare(e.key()) >= 0 {
					t.Fatalf("keys out of order")
				}
				k := e.key()
				prev = &k
			}
			if n.size != len(n.entries) {
				t.Fatalf("leaf size %d, %d entries", n.size, len(n.entries))
			}
			return n.size
		}
		if len(n.children) > maxChildren || len(n.children) != len(n.seps) {
			t.Fatalf("node with %d children, %d separators", len(n.children), len(n.seps))
		}
		sum := 0
		for i, c := range n.children {
			l, h := lo, hi
			if i > 0 {
				l = &n.seps[i]
			}
			if i+1 < len(n.seps) {
				h = &n.seps[i+1]
			}
			sum += walk(c, l, h)
		}
		if sum != n.size {
			t.Fatalf("node size %d, children hold %d", n.size, sum)
		}
		return sum
	}
	walk(tr.root, nil, nil)
}
