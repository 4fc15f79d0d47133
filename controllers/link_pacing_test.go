package controllers

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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
	q := priorityqueue.New[reconcile.Request]("paced-test")
	defer q.ShutDown()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	p := newPacedCreates(bound, 5*time.Millisecond)
	waitingBefore := testutil.ToFloat64(createsWaiting)
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
	if got, want := testutil.ToFloat64(createsWaiting)-waitingBefore, float64(firstList+created-bound); got != want {
		t.Fatalf("kurz_link_creates_waiting rose by %v, want %v", got, want)
	}

	// A worker: every request once, the queue never over the bound.
	seen := map[string]int{}
	var order []string
	for len(order) < firstList+created {
		got := make(chan reconcile.Request, 1)
		go func() {
			if req, shutdown := q.Get(); !shutdown {
				got <- req
			}
		}()
		select {
		case req := <-got:
			seen[req.Name]++
			order = append(order, req.Name)
			q.Done(req)
		case <-time.After(10 * time.Second):
			t.Fatalf("the queue gave nothing for 10 s after %d of %d requests: %v", len(order), firstList+created, order)
		}
		if n := q.Len(); n > bound {
			t.Fatalf("%d items in the queue, bound %d", n, bound)
		}
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
	if got := testutil.ToFloat64(createsWaiting) - waitingBefore; got != 0 {
		t.Errorf("kurz_link_creates_waiting is %v above where it began with none waiting", got)
	}
}

// When the controller's context ends (the replica no longer leads), what
// waits is dropped and no longer counted.
func TestPacedCreatesDropWhatWaitsAtTheEnd(t *testing.T) {
	q := priorityqueue.New[reconcile.Request]("paced-end-test")
	defer q.ShutDown()
	ctx, cancel := context.WithCancel(context.Background())
	p := newPacedCreates(2, time.Hour)
	before := testutil.ToFloat64(createsWaiting)
	for i := range 5 {
		p.Create(ctx, event.CreateEvent{Object: &kurzv1alpha1.Link{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: fmt.Sprint(i)}}}, q)
	}
	if got := testutil.ToFloat64(createsWaiting) - before; got != 3 {
		t.Fatalf("%v waiting, want 3", got)
	}
	done := make(chan struct{})
	go func() { p.run(ctx, q); close(done) }()
	cancel()
	<-done
	if got := testutil.ToFloat64(createsWaiting) - before; got != 0 {
		t.Errorf("%v still counted as waiting after the end", got)
	}
	if q.Len() != 2 {
		t.Errorf("the queue holds %d, want the 2 queued before", q.Len())
	}
}
