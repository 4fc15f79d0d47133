package clicks

import (
	"slices"
	"sync"
	"sync/atomic"

	"k8s.io/apimachinery/pkg/types"
)

// Link is the Link clicks are counted for: its uid (a Link deleted and
// created again under its name is another Link, whose clicks start over)
// and its name, which the Writer patches.
type Link struct {
	UID       types.UID
	Namespace string
	Name      string
}

func (l Link) key() types.NamespacedName {
	return types.NamespacedName{Namespace: l.Namespace, Name: l.Name}
}

// Queue holds the Counters clicked since the last flush round: clicks
// queue their Counter (once per round), the Writer takes them.
type Queue struct {
	mu  sync.Mutex
	cur []*Counter
	// flushing is the batch the flush round in progress took, so that
	// kurz_clicks_pending still sees its counts (see pending.go).
	flushing []*Counter
}

// NewQueue returns an empty queue.
func NewQueue() *Queue { return &Queue{} }

// NewSlot returns the Slot of the Link whose uid is uid; its Counter, once
// made, queues on q.
func (q *Queue) NewSlot(uid types.UID) *Slot { return &Slot{q: q, uid: uid} }

// newCounter returns a Counter of l that queues on q, with counts of its
// own: a Link the index does not hold (the spool's, a test's).
func (q *Queue) newCounter(l Link) *Counter { return &Counter{link: l, counts: &counts{}, q: q} }

func (q *Queue) push(c *Counter) {
	q.mu.Lock()
	q.cur = append(q.cur, c)
	q.mu.Unlock()
}

// peek returns the queued counters, leaving them queued.
func (q *Queue) peek() []*Counter {
	q.mu.Lock()
	defer q.mu.Unlock()
	return slices.Clone(q.cur)
}

// take empties the queue for a flush round; roundDone ends the round.
func (q *Queue) take() []*Counter {
	q.mu.Lock()
	defer q.mu.Unlock()
	out := q.cur
	q.cur = nil
	q.flushing = out
	return out
}

// roundDone forgets the batch of the round that ended.
func (q *Queue) roundDone() {
	q.mu.Lock()
	q.flushing = nil
	q.mu.Unlock()
}

// counts are a Link's clicks since its last flush round: all a click
// writes.
type counts struct {
	n      atomic.Int64
	last   atomic.Int64 // unix nanoseconds of the latest click
	queued atomic.Bool  // the Counter is in the queue already
}

// add counts one click at now, and reports whether it is the round's first,
// whose Counter the caller queues.
func (k *counts) add(now int64) (queue bool) {
	k.n.Add(1)
	k.last.Store(now)
	return !k.queued.Load() && k.queued.CompareAndSwap(false, true)
}

// Slot is where the clicks of one Link (one uid) are counted. The redirect
// index's Entries of one Link share it, so no click is lost to an edit.
//
// A click writes the Slot's counts and nothing else, so a redirect of a
// link not in the CPU's cache waits for one cache line: a Slot is 56
// bytes, in Go's 64-byte size class, whose objects are each one line. Its
// Counter, which the flush rounds queue and read (the Link's name, 64
// bytes), is made at the first click and read by a click only when it
// queues it, once per round: most links are not clicked between two starts
// of a replica. Before the counts moved here a click read the Slot and
// then the Counter, two lines; the Slot was 32 bytes and the Counter 80.
//
// The Slot holds the Link's uid, which is the Slot's by definition, so that
// the redirect index's Entry need not: an Entry is then 64 bytes, one cache
// line too.
type Slot struct {
	counts
	c   atomic.Pointer[Counter]
	q   *Queue
	uid types.UID
}

// UID is the uid of the Link whose clicks the Slot counts.
func (s *Slot) UID() types.UID { return s.uid }

// Linker names the Link a Slot counts.
type Linker interface{ ClickedLink() Link }

// ClickedLink is l.
func (l *Link) ClickedLink() Link { return *l }

// Click counts one click at now (unix nanoseconds) of the Link l names. l
// is asked only when the Slot makes its Counter, at its first click: on the
// redirect path every further read of the Link's record is a likely cache
// miss. A click allocates nothing.
func (s *Slot) Click(l Linker, now int64) {
	if s.add(now) {
		c := s.c.Load()
		if c == nil {
			c = s.Counter(l.ClickedLink())
		}
		s.q.push(c)
	}
}

// Counter returns the Slot's Counter, made for l if there is none yet.
func (s *Slot) Counter(l Link) *Counter {
	if c := s.c.Load(); c != nil {
		return c
	}
	c := &Counter{link: l, counts: &s.counts, q: s.q}
	if s.c.CompareAndSwap(nil, c) {
		return c
	}
	return s.c.Load()
}

// Counter counts the clicks of one Link (one uid) between flush rounds. It
// outlives the Entry it was made for when the Link changes, so no click is
// lost to an edit.
type Counter struct {
	link Link
	// counts are its Slot's, or its own for a Link the index does not
	// hold.
	*counts
	q *Queue
}

// requeue gives back counts a flush could not write, for the next flush.
func (c *Counter) requeue(delta, last int64) {
	c.n.Add(delta)
	c.seen(last)
	if c.queued.CompareAndSwap(false, true) {
		c.q.push(c)
	}
}

// seen raises the counter's latest click time to last.
func (c *Counter) seen(last int64) {
	for {
		cur := c.last.Load()
		if cur >= last || c.last.CompareAndSwap(cur, last) {
			return
		}
	}
}
