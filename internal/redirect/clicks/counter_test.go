package clicks

import (
	"sync"
	"testing"
	"unsafe"

	. "github.com/onsi/gomega"
)

// A Slot makes its Counter at the first click, for the Link of that click,
// and queues it once per flush round however often it is clicked.
func TestSlotCountsIntoOneCounter(t *testing.T) {
	g := NewWithT(t)
	g.Expect(int(unsafe.Sizeof(Slot{}))).To(BeNumerically("<=", 64), "what every Link in the index costs: one cache line")
	g.Expect(int(unsafe.Sizeof(Counter{}))).To(BeNumerically("<=", 64), "what a clicked Link costs")
	q := NewQueue()
	s := q.NewSlot("u")
	g.Expect(s.c.Load()).To(BeNil(), "no Counter before the first click")
	l := Link{UID: "u", Namespace: "ns", Name: "l"}

	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for i := range 100 {
				s.Click(&l, int64(i))
			}
		})
	}
	wg.Wait()
	c := s.c.Load()
	g.Expect(c.link).To(Equal(l))
	g.Expect(c.counts).To(BeIdenticalTo(&s.counts), "the Counter reads the Slot's counts")
	g.Expect(c.n.Load()).To(Equal(int64(400)))
	g.Expect(c.last.Load()).To(Equal(int64(99)))
	g.Expect(s.Counter(Link{UID: "other"})).To(BeIdenticalTo(c), "the Link is read only to make the Counter")
	g.Expect(q.take()).To(Equal([]*Counter{c}), "queued once")

	c.queued.Store(false) // a flush round took it
	s.Click(&l, 100)
	g.Expect(q.take()).To(Equal([]*Counter{c}), "queued again after the round")
}

// The click path allocates nothing once the Link's Counter exists.
func TestClickAllocatesNothing(t *testing.T) {
	s := NewQueue().NewSlot("u")
	l := Link{UID: "u", Namespace: "ns", Name: "l"}
	s.Click(&l, 1)
	NewWithT(t).Expect(testing.AllocsPerRun(1000, func() { s.Click(&l, 2) })).To(BeZero())
}
