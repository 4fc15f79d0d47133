package pagination

import (
	"slices"

	"k8s.io/apimachinery/pkg/types"
)

// sortKey orders a namespace's objects newest first: created time
// descending, then uid descending. Seconds and nanoseconds are kept apart so
// that any time (even the zero time of an unstamped object) compares right.
type sortKey struct {
	sec  int64
	nsec int32
	uid  types.UID // shares the object's string, no copy
}

// compare is negative when a is listed before b.
func (a sortKey) compare(b sortKey) int {
	switch {
	case a.sec != b.sec:
		if a.sec > b.sec {
			return -1
		}
		return 1
	case a.nsec != b.nsec:
		if a.nsec > b.nsec {
			return -1
		}
		return 1
	case a.uid != b.uid:
		if a.uid > b.uid {
			return -1
		}
		return 1
	}
	return 0
}

// entry is what a leaf holds per object: its time and the informer's
// pointer, 24 bytes. The uid that breaks ties is read from the object, not
// kept beside it (16 bytes less per entry, about 20 per Link with leaves
// two-thirds full): two objects rarely share a microsecond.
type entry[T object] struct {
	sec  int64
	nsec int32
	obj  T
}

// object is what the tree orders: an object with a uid.
type object interface{ GetUID() types.UID }

func entryOf[T object](k sortKey, obj T) entry[T] {
	return entry[T]{sec: k.sec, nsec: k.nsec, obj: obj}
}

func (e entry[T]) key() sortKey { return sortKey{sec: e.sec, nsec: e.nsec, uid: e.obj.GetUID()} }

// compare is sortKey.compare of e's key and k, the uid read only on a tie.
func (e entry[T]) compare(k sortKey) int {
	switch {
	case e.sec != k.sec:
		if e.sec > k.sec {
			return -1
		}
		return 1
	case e.nsec != k.nsec:
		if e.nsec > k.nsec {
			return -1
		}
		return 1
	}
	return sortKey{sec: e.sec, nsec: e.nsec, uid: e.obj.GetUID()}.compare(k)
}

// Node capacities. 64 keeps a 100 000 item tree three levels deep while an
// insert moves at most 64 entries.
const (
	maxEntries  = 64
	maxChildren = 64
	minFill     = maxEntries / 4
)

// node is a B+tree node that also counts the entries below it, so that the
// tree can find the i-th entry in O(log n) (an order-statistic tree).
type node[T object] struct {
	size int // entries in this subtree

	entries []entry[T] // leaf only

	// Internal nodes: seps[i] is a lower bound of every key in children[i]
	// (seps[0] is unused). Deletes may leave a separator lower than the
	// child's smallest key, which keeps it a valid bound.
	children []*node[T]
	seps     []sortKey
}

func (n *node[T]) leaf() bool { return n.children == nil }

// tree is one namespace's ordered set.
type tree[T object] struct {
	root *node[T]
	// namespace is whose objects the tree orders (Index.trees' key).
	namespace string
}

func newTree[T object](namespace string) *tree[T] {
	return &tree[T]{root: &node[T]{}, namespace: namespace}
}

func (t *tree[T]) len() int { return t.root.size }

// childFor picks the child whose key range holds k.
func (n *node[T]) childFor(k sortKey) int {
	// First separator (from index 1) that sorts after k; k goes left of it.
	i, _ := slices.BinarySearchFunc(n.seps[1:], k, func(s, k sortKey) int {
		if s.compare(k) <= 0 {
			return -1
		}
		return 1
	})
	return i
}

// insert adds e, or replaces the object of an entry with the same key. It
// reports whether the tree grew.
func (t *tree[T]) insert(k sortKey, obj T) bool {
	grew, right, sep := t.root.insert(k, entryOf(k, obj))
	if right != nil {
		old := t.root
		t.root = &node[T]{
			size:     old.size + right.size,
			children: []*node[T]{old, right},
			seps:     []sortKey{{}, sep},
		}
	}
	return grew
}

// insert returns a new right sibling and its separator when n split.
func (n *node[T]) insert(k sortKey, e entry[T]) (grew bool, right *node[T], sep sortKey) {
	if n.leaf() {
		i, found := slices.BinarySearchFunc(n.entries, k, func(x entry[T], k sortKey) int { return x.compare(k) })
		if found {
			n.entries[i] = e
			return false, nil, sortKey{}
		}
		n.entries = slices.Insert(n.entries, i, e)
		n.size++
		if len(n.entries) <= maxEntries {
			return true, nil, sortKey{}
		}
		half := splitAt(i, len(n.entries))
		r := &node[T]{entries: make([]entry[T], len(n.entries)-half, maxEntries+1)}
		copy(r.entries, n.entries[half:])
		clear(n.entries[half:]) // drop pointers the left leaf no longer owns
		n.entries = n.entries[:half]
		n.size, r.size = len(n.entries), len(r.entries)
		return true, r, r.entries[0].key()
	}

	i := n.childFor(k)
	grew, r, s := n.children[i].insert(k, e)
	if grew {
		n.size++
	}
	if r == nil {
		return grew, nil, sortKey{}
	}
	n.children = slices.Insert(n.children, i+1, r)
	n.seps = slices.Insert(n.seps, i+1, s)
	if len(n.children) <= maxChildren {
		return grew, nil, sortKey{}
	}
	half := len(n.children) / 2
	rn := &node[T]{
		children: slices.Clone(n.children[half:]),
		seps:     slices.Clone(n.seps[half:]),
	}
	clear(n.children[half:])
	n.children, n.seps = n.children[:half], n.seps[:half]
	n.size = 0
	for _, c := range n.children {
		n.size += c.size
	}
	for _, c := range rn.children {
		rn.size += c.size
	}
	sep = rn.seps[0]
	rn.seps[0] = sortKey{}
	return grew, rn, sep
}

// splitAt is where a full leaf of n entries splits, the new one at i.
// Objects mostly arrive in order (an informer's list in name order, which
// for loaded Links is creation order; then each new object, the newest):
// an entry at either end starts a leaf of its own and leaves the other
// one full. Halves there would leave every leaf half empty for good: about
// 30 bytes per Link at 100 000 (docs/scaling.md). Anywhere else, halves.
func splitAt(i, n int) int {
	switch i {
	case 0:
		return 1
	case n - 1:
		return n - 1
	}
	return n / 2
}

// remove deletes the entry with key k; it reports whether there was one.
func (t *tree[T]) remove(k sortKey) bool {
	removed := t.root.remove(k)
	// A root with a single child is one level too many.
	for !t.root.leaf() && len(t.root.children) == 1 {
		t.root = t.root.children[0]
	}
	if !t.root.leaf() && len(t.root.children) == 0 {
		t.root = &node[T]{}
	}
	return removed
}

func (n *node[T]) remove(k sortKey) bool {
	if n.leaf() {
		i, found := slices.BinarySearchFunc(n.entries, k, func(x entry[T], k sortKey) int { return x.compare(k) })
		if !found {
			return false
		}
		n.entries = slices.Delete(n.entries, i, i+1)
		n.size--
		return true
	}
	i := n.childFor(k)
	c := n.children[i]
	if !c.remove(k) {
		return false
	}
	n.size--
	n.rebalance(i)
	return true
}

// rebalance drops an empty child and merges an underfull one into a
// neighbour when both fit in one node, so leaves stay reasonably full and a
// page walks few of them.
func (n *node[T]) rebalance(i int) {
	c := n.children[i]
	if c.size == 0 {
		n.dropChild(i)
		return
	}
	if c.width() >= minFill {
		return
	}
	switch {
	case i+1 < len(n.children) && c.width()+n.children[i+1].width() <= c.capacity():
		n.merge(i)
	case i > 0 && n.children[i-1].width()+c.width() <= c.capacity():
		n.merge(i - 1)
	}
}

func (n *node[T]) width() int {
	if n.leaf() {
		return len(n.entries)
	}
	return len(n.children)
}

func (n *node[T]) capacity() int {
	if n.leaf() {
		return maxEntries
	}
	return maxChildren
}

func (n *node[T]) dropChild(i int) {
	n.children = slices.Delete(n.children, i, i+1)
	if i == 0 && len(n.seps) > 1 {
		// The new first child needs no separator.
		n.seps = slices.Delete(n.seps, 1, 2)
		if len(n.seps) > 0 {
			n.seps[0] = sortKey{}
		}
		return
	}
	n.seps = slices.Delete(n.seps, i, i+1)
}

// merge moves children[i+1] into children[i].
func (n *node[T]) merge(i int) {
	l, r := n.children[i], n.children[i+1]
	if l.leaf() {
		l.entries = append(l.entries, r.entries...)
	} else {
		seps := slices.Clone(r.seps)
		seps[0] = n.seps[i+1] // r's lower bound becomes the separator inside l
		l.children = append(l.children, r.children...)
		l.seps = append(l.seps, seps...)
	}
	l.size += r.size
	n.children = slices.Delete(n.children, i+1, i+2)
	n.seps = slices.Delete(n.seps, i+1, i+2)
}

// slice appends up to limit objects starting at offset to out.
func (t *tree[T]) slice(offset, limit int, out []T) []T {
	if offset < 0 {
		offset = 0
	}
	if limit <= 0 || offset >= t.root.size {
		return out
	}
	limit = min(limit, t.root.size-offset)
	return t.root.slice(offset, offset+limit, out)
}

// slice appends the entries with index in [from, to) of this subtree.
func (n *node[T]) slice(from, to int, out []T) []T {
	if n.leaf() {
		for _, e := range n.entries[from:min(to, len(n.entries))] {
			out = append(out, e.obj)
		}
		return out
	}
	for _, c := range n.children {
		if from >= c.size {
			from -= c.size
			to -= c.size
			continue
		}
		out = c.slice(from, to, out)
		to -= c.size
		from = 0
		if to <= 0 {
			break
		}
	}
	return out
}

// find returns the object with key k.
func (t *tree[T]) find(k sortKey) (T, bool) {
	n := t.root
	for !n.leaf() {
		n = n.children[n.childFor(k)]
	}
	i, found := slices.BinarySearchFunc(n.entries, k, func(x entry[T], k sortKey) int { return x.compare(k) })
	if !found {
		var zero T
		return zero, false
	}
	return n.entries[i].obj, true
}
