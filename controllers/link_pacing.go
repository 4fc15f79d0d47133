package controllers

import (
	"context"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"
)

// Created Links, and the Links a Domain event maps to, reach the work
// queue at the pace its workers empty it.
//
// The work queue holds each item in maps (its own and its metrics'), and
// Go maps never shrink: a flood of 100 000 Links at once sized those maps
// for the life of the process: 30 MB of a settled replica's 174 MB of
// live heap at 100 000 Links (heap profile of `make bench-scale
// N=100000`, at 098e342), 300 bytes a Link. Floods come from a first start
// over a bulk import (link_start.go leaves out only the Links that already
// have their status), from kubectl applying Links faster than the
// controller writes their statuses, and from a Domain verified or claimed
// while its Links exist: its claim reconciles every Link of the hostname
// (15 MB of queue maps left at 100 000 Links, 16a5691, when only Creates
// were paced). So such a request goes to the queue only while the queue
// holds fewer than pacedQueueBound ready items; beyond, it waits in a list
// of its own, which the feeder moves to the queue as the queue empties,
// and which lets its memory go once it is empty. A Link waits at most once:
// a Domain event's request for a Link whose Create still waits is that
// same wait. Updates, deletes and the key peers' watch go to the queue as
// before (the controller's For watch takes every event but Creates:
// createsPaced).
//
// Order is kept: Links created while the controller runs, and those Domain
// events map to, go before the first list's, which go in at low priority,
// as controller-runtime queues them. The backlog is
// kurz_link_reconciles_waiting; the queue's own depth then says no more
// than pacedQueueBound.

// pacedQueueBound is how many ready items the Link queue may hold before
// requests wait: ten seconds of work or more at the pace of a status write
// each (300 a second on two shared cores at most), so the workers never
// wait for the feeder, which tops the queue up every pacedFeedInterval.
const pacedQueueBound = 2000

// pacedBound is the bound SetupWithManager gives the Link controller;
// tests lower it.
var pacedBound = pacedQueueBound

// pacedFeedInterval is how often the feeder looks at the queue while
// requests wait.
const pacedFeedInterval = 50 * time.Millisecond

var linksWaiting = prometheus.NewGauge(prometheus.GaugeOpts{
	Name: "kurz_link_reconciles_waiting",
	Help: "Link reconciles (of created Links, and of the Links a Domain event maps to) waiting for room in the Link controller's work queue (the queue holds at most 2000 ready items; see controllers/link_pacing.go).",
})

var registerLinksWaiting sync.Once

// pacedLinks is the Link controller's handler of Link Creates, and through
// mapped of Domain events. Its feeder is a source (feed) of the same
// controller, so it runs on the leader, under the controller's context.
type pacedLinks struct {
	bound    int
	interval time.Duration

	mu sync.Mutex
	// waiting holds the requests that found the queue full: [createdLive]
	// Links created while the controller ran and those Domain events map
	// to, [fromFirstList] the Links of the informer's first list. Each is
	// read from its head; both are dropped once empty.
	waiting [2][]reconcile.Request
	heads   [2]int
	// waits is every request of waiting, so none waits twice; dropped with
	// the lists.
	waits map[reconcile.Request]struct{}
	wake  chan struct{}
}

const (
	createdLive   = 0
	fromFirstList = 1
)

func newPacedLinks(bound int, interval time.Duration) *pacedLinks {
	registerLinksWaiting.Do(func() { metrics.Registry.MustRegister(linksWaiting) })
	return &pacedLinks{bound: bound, interval: interval, wake: make(chan struct{}, 1)}
}

// Create queues the Link's request, or keeps it for the feeder when the
// queue is full or others already wait (so none overtakes them).
func (p *pacedLinks) Create(ctx context.Context, e event.CreateEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
	if e.Object == nil {
		return
	}
	list := createdLive
	if e.IsInInitialList {
		list = fromFirstList
	}
	p.offer(q, list, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(e.Object)})
}

// offer queues req, or keeps it in list for the feeder when the queue is
// full or others already wait; a request that waits already stays where
// it is.
func (p *pacedLinks) offer(q workqueue.TypedRateLimitingInterface[reconcile.Request], list int, req reconcile.Request) {
	p.mu.Lock()
	if _, ok := p.waits[req]; ok {
		p.mu.Unlock()
		return
	}
	if p.pendingLocked() == 0 && q.Len() < p.bound {
		p.mu.Unlock()
		p.add(q, list, req)
		return
	}
	p.waiting[list] = append(p.waiting[list], req)
	if p.waits == nil {
		p.waits = map[reconcile.Request]struct{}{}
	}
	p.waits[req] = struct{}{}
	linksWaiting.Inc()
	p.mu.Unlock()
	select {
	case p.wake <- struct{}{}:
	default:
	}
}

// add queues req as controller-runtime's handler queues a Create: at low
// priority from the informer's first list.
func (p *pacedLinks) add(q workqueue.TypedRateLimitingInterface[reconcile.Request], list int, req reconcile.Request) {
	if list == fromFirstList {
		addLow(q, req)
		return
	}
	q.Add(req)
}

// Update, Delete and Generic do nothing: the For watch queues those
// (createsPaced keeps only Creates from it).
func (p *pacedLinks) Update(context.Context, event.UpdateEvent, workqueue.TypedRateLimitingInterface[reconcile.Request]) {
}

func (p *pacedLinks) Delete(context.Context, event.DeleteEvent, workqueue.TypedRateLimitingInterface[reconcile.Request]) {
}

func (p *pacedLinks) Generic(context.Context, event.GenericEvent, workqueue.TypedRateLimitingInterface[reconcile.Request]) {
}

// createsPaced keeps Creates from the Link controller's For watch:
// pacedLinks queues them.
var createsPaced = predicate.Funcs{CreateFunc: func(event.CreateEvent) bool { return false }}

// onlyCreates is pacedLinks' watch: Creates alone.
var onlyCreates = predicate.Funcs{
	CreateFunc:  func(event.CreateEvent) bool { return true },
	UpdateFunc:  func(event.UpdateEvent) bool { return false },
	DeleteFunc:  func(event.DeleteEvent) bool { return false },
	GenericFunc: func(event.GenericEvent) bool { return false },
}

func (p *pacedLinks) pendingLocked() int {
	return len(p.waiting[createdLive]) - p.heads[createdLive] + len(p.waiting[fromFirstList]) - p.heads[fromFirstList]
}

// feed is the source that runs the feeder.
func (p *pacedLinks) feed() source.Source {
	return source.Func(func(ctx context.Context, q workqueue.TypedRateLimitingInterface[reconcile.Request]) error {
		go p.run(ctx, q)
		return nil
	})
}

// run moves what waits to q as q empties, until ctx ends; then what still
// waits is dropped (the replica no longer leads: the next leader's first
// list has those Links).
func (p *pacedLinks) run(ctx context.Context, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
	tick := time.NewTimer(p.interval)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			p.mu.Lock()
			linksWaiting.Sub(float64(p.pendingLocked()))
			p.waiting, p.heads, p.waits = [2][]reconcile.Request{}, [2]int{}, nil
			p.mu.Unlock()
			return
		case <-p.wake:
		case <-tick.C:
		}
		if p.topUp(q) > 0 {
			tick.Reset(p.interval)
		}
	}
}

// topUp moves waiting requests to q until it holds bound ready items, the
// live ones first, and returns how many still wait.
func (p *pacedLinks) topUp(q workqueue.TypedRateLimitingInterface[reconcile.Request]) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	room := p.bound - q.Len()
	moved := 0
	for _, list := range []int{createdLive, fromFirstList} {
		for ; room > 0 && p.heads[list] < len(p.waiting[list]); room-- {
			req := p.waiting[list][p.heads[list]]
			p.waiting[list][p.heads[list]] = reconcile.Request{}
			p.heads[list]++
			delete(p.waits, req)
			moved++
			p.add(q, list, req)
		}
		if p.heads[list] == len(p.waiting[list]) {
			p.waiting[list], p.heads[list] = nil, 0
		}
	}
	linksWaiting.Sub(float64(moved))
	if p.pendingLocked() == 0 {
		p.waits = nil // a map keeps its size: let the flood's go
	}
	return p.pendingLocked()
}

// mapped is the handler of a watch whose events map to Links, as
// handler.EnqueueRequestsFromMapFunc with toLinks would be (an update maps
// the old object and the new one), but each request goes through offer as
// a live one: a Domain's claim reconciles every Link of its hostname.
func (p *pacedLinks) mapped(toLinks handler.MapFunc) handler.EventHandler {
	type queue = workqueue.TypedRateLimitingInterface[reconcile.Request]
	offerAll := func(ctx context.Context, q queue, objs ...client.Object) {
		for _, o := range objs {
			if o == nil {
				continue
			}
			for _, req := range toLinks(ctx, o) {
				p.offer(q, createdLive, req)
			}
		}
	}
	return handler.Funcs{
		CreateFunc:  func(ctx context.Context, e event.CreateEvent, q queue) { offerAll(ctx, q, e.Object) },
		UpdateFunc:  func(ctx context.Context, e event.UpdateEvent, q queue) { offerAll(ctx, q, e.ObjectOld, e.ObjectNew) },
		DeleteFunc:  func(ctx context.Context, e event.DeleteEvent, q queue) { offerAll(ctx, q, e.Object) },
		GenericFunc: func(ctx context.Context, e event.GenericEvent, q queue) { offerAll(ctx, q, e.Object) },
	}
}
