package controllers

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/priorityqueue"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	kurzv1alpha1 "github.com/kurz-dev/kurz/api/v1alpha1"
)

// A flood of Creates never puts more than the bound into controller-
// runtime's priority queue; the feeder moves the rest in as a worker
// empties it, each Link exactly once, those created while the controller
// runs before the first list's that waited; and once none waits, the
// waiting lists and the gauge are empty again.
func TestPacedCreatesBoundTheQueue(t *testing.T) {
	const bound, firstList, created = 10, 40, 20
	ctx, q, p, waitingBefore := newPaced(t, bound)
	go p.run(ctx, q)

	link := func(name string) *kurzv1alpha1.Link {
		return &kurzv1alpha1.Link{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: name}}
	}
	for i := range firstList {
		p.Create(ctx, event.CreateEvent{Object: link(fmt.Sprintf("first-%d", i)), IsInInitialList: true}, q)
		if n := q.Len(); n > bound {
			t.Fatalf("%d items in the queue after %d Creates, bound %d", n, i+1, bound)
		}
	}
	for i := range created {
		p.Create(ctx, event.CreateEvent{Object: link(fmt.Sprintf("live-%d", i))}, q)
	}
	if got, want := testutil.ToFloat64(linksWaiting)-waitingBefore, float64(firstList+created-bound); got != want {
		t.Fatalf("kurz_link_reconciles_waiting rose by %v, want %v", got, want)
	}

	// A worker: every request once, the queue never over the bound.
	order := drain(t, q, firstList+created, bound)
	seen := map[string]int{}
	for _, name := range order {
		seen[name]++
	}
	for name, n := range seen {
		if n != 1 {
			t.Errorf("%s queued %d times", name, n)
		}
	}
	lastLive, firstWaited := -1, len(order)
	for i, name := range order {
		var n int
		if _, err := fmt.Sscanf(name, "live-%d", &n); err == nil {
			lastLive = i
		} else if _, err := fmt.Sscanf(name, "first-%d", &n); err == nil && n >= bound && i < firstWaited {
			firstWaited = i
		}
	}
	if lastLive > firstWaited {
		t.Errorf("a Link created while the controller ran (at %d) came after one of the first list that waited (at %d): %v", lastLive, firstWaited, order)
	}
	p.mu.Lock()
	lists := p.waiting
	p.mu.Unlock()
	if lists[createdLive] != nil || lists[fromFirstList] != nil {
		t.Errorf("the waiting lists keep their memory once empty: %d and %d of capacity", cap(lists[createdLive]), cap(lists[fromFirstList]))
	}
	if got := testutil.ToFloat64(linksWaiting) - waitingBefore; got != 0 {
		t.Errorf("kurz_link_reconciles_waiting is %v above where it began with none waiting", got)
	}
}

// When the controller's context ends (the replica no longer leads), what
// waits is dropped and no longer counted.
func TestPacedCreatesDropWhatWaitsAtTheEnd(t *testing.T) {
	q := priorityqueue.New[reconcile.Request]("paced-end-test")
	defer q.ShutDown()
	ctx, cancel := context.WithCancel(context.Background())
	p := newPacedLinks(2, time.Hour)
	before := testutil.ToFloat64(linksWaiting)
	for i := range 5 {
		p.Create(ctx, event.CreateEvent{Object: &kurzv1alpha1.Link{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: fmt.Sprint(i)}}}, q)
	}
	if got := testutil.ToFloat64(linksWaiting) - before; got != 3 {
		t.Fatalf("%v waiting, want 3", got)
	}
	done := make(chan struct{})
	go func() { p.run(ctx, q); close(done) }()
	cancel()
	<-done
	if got := testutil.ToFloat64(linksWaiting) - before; got != 0 {
		t.Errorf("%v still counted as waiting after the end", got)
	}
	if q.Len() != 2 {
		t.Errorf("the queue holds %d, want the 2 queued before", q.Len())
	}
}

// A Domain event that maps to every Link of its hostname is paced as
// Creates are: the queue stays within the bound, a Link whose first-list
// Create still waits is not queued a second time, and the Links only the
// Domain event names go before the first list's that wait.
//
// The feeder starts only after the Domain event, with the queue empty:
// a request the queue still holds when the feeder adds it again is merged
// by the queue (one reconcile, which is right), and when that happens
// would depend on the worker's pace against the feeder's.
func TestDomainEventsArePacedAndALinkWaitsOnce(t *testing.T) {
	const bound, firstList, onlyMapped = 10, 30, 20
	ctx, q, p, waitingBefore := newPaced(t, bound)

	link := func(name string) reconcile.Request {
		return reconcile.Request{NamespacedName: types.NamespacedName{Namespace: "team", Name: name}}
	}
	for i := range firstList {
		p.Create(ctx, event.CreateEvent{Object: &kurzv1alpha1.Link{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: fmt.Sprintf("first-%d", i)}}, IsInInitialList: true}, q)
	}
	// The bound's first ten went to the queue; a worker reconciles them
	// before the Domain event.
	order := drain(t, q, bound, bound)
	var all []reconcile.Request
	for i := range firstList {
		all = append(all, link(fmt.Sprintf("first-%d", i)))
	}
	for i := range onlyMapped {
		all = append(all, link(fmt.Sprintf("mapped-%d", i)))
	}
	toLinks := func(context.Context, client.Object) []reconcile.Request { return all }
	domain := &kurzv1alpha1.Domain{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "d"}}
	// An update maps the old and the new Domain: the same Links twice.
	p.mapped(toLinks).Update(ctx, event.UpdateEvent{ObjectOld: domain, ObjectNew: domain.DeepCopy()}, q)
	if n := q.Len(); n != 0 {
		t.Fatalf("%d items in the queue after the Domain event, want 0: others wait", n)
	}
	// Waiting: the first list's beyond the bound once each, and the
	// Domain's for the rest: the ten reconciled already wait again.
	if got, want := testutil.ToFloat64(linksWaiting)-waitingBefore, float64(firstList-bound+bound+onlyMapped); got != want {
		t.Fatalf("kurz_link_reconciles_waiting rose by %v, want %v", got, want)
	}

	go p.run(ctx, q)
	order = append(order, drain(t, q, firstList-bound+bound+onlyMapped, bound)...)
	seen := map[string]int{}
	lastMapped, firstWaited := -1, len(order)
	for i, name := range order {
		seen[name]++
		var n int
		if _, err := fmt.Sscanf(name, "mapped-%d", &n); err == nil {
			lastMapped = i
		} else if _, err := fmt.Sscanf(name, "first-%d", &n); err == nil && n >= bound && i < firstWaited {
			firstWaited = i
		}
	}
	for i := range firstList {
		name, want := fmt.Sprintf("first-%d", i), 1
		if i < bound {
			want = 2 // queued at its Create, and again for the Domain
		}
		if seen[name] != want {
			t.Errorf("%s reconciled %d times, want %d", name, seen[name], want)
		}
	}
	for i := range onlyMapped {
		if name := fmt.Sprintf("mapped-%d", i); seen[name] != 1 {
			t.Errorf("%s reconciled %d times, want 1", name, seen[name])
		}
	}
	if lastMapped > firstWaited {
		t.Errorf("a Link of the Domain event (at %d) came after one of the first list that waited (at %d): %v", lastMapped, firstWaited, order)
	}
	p.mu.Lock()
	waits := p.waits
	p.mu.Unlock()
	if waits != nil {
		t.Errorf("the set of waiting Links keeps its memory once none waits: %d entries", len(waits))
	}
	if got := testutil.ToFloat64(linksWaiting) - waitingBefore; got != 0 {
		t.Errorf("kurz_link_reconciles_waiting is %v above where it began with none waiting", got)
	}
}

// newPaced makes a pacer with bound over a new priority queue, and returns
// them, with a context that ends with the test for the feeder (go p.run),
// and the value of kurz_link_reconciles_waiting before.
func newPaced(t *testing.T, bound int) (context.Context, priorityqueue.PriorityQueue[reconcile.Request], *pacedLinks, float64) {
	t.Helper()
	q := priorityqueue.New[reconcile.Request](t.Name())
	t.Cleanup(q.ShutDown)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	p := newPacedLinks(bound, 5*time.Millisecond)
	before := testutil.ToFloat64(linksWaiting)
	return ctx, q, p, before
}

// drain is a worker: it takes n requests from q, one at a time, failing
// the test when q holds more than bound or gives nothing for 10 s, and
// returns their names in the order q gave them.
func drain(t *testing.T, q priorityqueue.PriorityQueue[reconcile.Request], n, bound int) []string {
	t.Helper()
	var order []string
	for len(order) < n {
		got := make(chan reconcile.Request, 1)
		go func() {
			if req, shutdown := q.Get(); !shutdown {
				got <- req
			}
		}()
		select {
		case req := <-got:
			order = append(order, req.Name)
			q.Done(req)
		case <-time.After(10 * time.Second):
			t.Fatalf("the queue gave nothing for 10 s after %d of %d requests: %v", len(order), n, order)
		}
		if l := q.Len(); l > bound {
			t.Fatalf("%d items in the queue, bound %d", l, bound)
		}
	}
	return order
}
