package controllers

import (
	"context"
	"time"

	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/client-go/util/workqueue"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/priorityqueue"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	kurzv1alpha1 "github.com/kurz-dev/kurz/api/v1alpha1"
)

// A leader's start without a queue flood. The Link controller's own watch
// used to queue every Link of the informer's first list. At 100 000 Links
// that sized the work queue's maps (and its metrics') for 100 000 items,
// and Go maps never shrink: 13 MB of a settled replica's heap at 100 000,
// about 270 MB at a million, for the life of the process. Yet nearly every
// Link at a start already has the status its controller would write.
//
// So the first list's Links whose status records their generation are not
// queued (settledAtStart), and once the cache has synced one pass
// (startCheck) computes each of their statuses in memory, as the
// reconcile would, and queues only those whose status would change:
// Domains deleted or added while no leader ran, the older holder of a key
// gone, a pending created-at stamp, and every Link with an expiry (its
// reconcile requeues it for then). What it queues goes in at low priority,
// as the first list's events do, so changes made after the start go first.

// settledAtStart drops the Create event of a Link from the informer's
// first list when its status records its generation: the start check
// looks at it instead.
var settledAtStart = predicate.Funcs{
	CreateFunc: func(e event.CreateEvent) bool {
		l, ok := e.Object.(*kurzv1alpha1.Link)
		return !ok || !e.IsInInitialList || !statusRecordsGeneration(l)
	},
}

// statusRecordsGeneration reports whether the controller wrote l's status
// for its current spec (the only Links settledAtStart leaves out).
func statusRecordsGeneration(l *kurzv1alpha1.Link) bool {
	return l.Status.ObservedGeneration == l.Generation &&
		meta.FindStatusCondition(l.Status.Conditions, kurzv1alpha1.ConditionReady) != nil
}

// startCheck is a source of the Link controller: started with it (so on
// the leader only, once a term), it waits for the cache and queues the
// Links settledAtStart left out whose status is not what it would be.
func (r *LinkReconciler) startCheck(c cache.Cache) source.Source {
	return source.Func(func(ctx context.Context, q workqueue.TypedRateLimitingInterface[reconcile.Request]) error {
		go func() {
			if !c.WaitForCacheSync(ctx) {
				return
			}
			r.checkSettled(ctx, q)
		}()
		return nil
	})
}

// checkSettled is startCheck's pass over the cache.
func (r *LinkReconciler) checkSettled(ctx context.Context, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
	began := time.Now()
	checked, queued := 0, 0
	// The cache's own objects, read only: a copy of every Link at once
	// (even a shallow one, as a List makes) would be 51 MB at 100 000
	// Links, at the moment a start's heap is largest.
	r.Links.All(func(l *kurzv1alpha1.Link) {
		if ctx.Err() != nil || !statusRecordsGeneration(l) {
			return // the first list's event queued it
		}
		checked++
		if r.wouldChange(ctx, l) {
			addLow(q, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(l)})
			queued++
		}
	})
	if ctx.Err() != nil {
		return
	}
	ctrl.LoggerFrom(ctx).WithName("start-check").Info("checked the Links that looked settled",
		"checked", checked, "queued", queued, "took", time.Since(began).Round(time.Millisecond))
}

// wouldChange reports whether a reconcile of l would write its status or
// requeue it for its expiry (an error too: the reconcile reports it).
func (r *LinkReconciler) wouldChange(ctx context.Context, l *kurzv1alpha1.Link) bool {
	// The reconcile writes status only: a copy of the status beside the
	// cache's metadata and spec is all it needs, not 1 KB of Link.
	next := *l
	l.Status.DeepCopyInto(&next.Status)
	res, _, err := r.computeStatus(ctx, &next)
	return err != nil || res.RequeueAfter > 0 || !apiequality.Semantic.DeepEqual(&l.Status, &next.Status)
}

// addLow queues req at the priority of an informer's first list when q is
// controller-runtime's priority queue.
func addLow(q workqueue.TypedRateLimitingInterface[reconcile.Request], req reconcile.Request) {
	if pq, ok := q.(priorityqueue.PriorityQueue[reconcile.Request]); ok {
		pq.AddWithOpts(priorityqueue.AddOpts{Priority: new(handler.LowPriority)}, req)
		return
	}
	q.Add(req)
}
