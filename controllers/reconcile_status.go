package controllers

import (
	"context"

	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	kurzv1alpha1 "github.com/kurz-dev/kurz/api/v1alpha1"
)

// The Link and Domain controllers share one shape: read the object, leave
// it alone while it is being deleted, compute its status, patch what
// changed. These helpers are that shape, so the two differ only in what
// they compute.

// objectPtr is a pointer to an API type T, so getLive can allocate one.
type objectPtr[T any] interface {
	*T
	client.Object
}

// getLive reads the object of req, or nil when there is nothing to do:
// it is gone, or being deleted (someone else's finalizer), and so no
// longer holds its key or hostname.
func getLive[T any, P objectPtr[T]](ctx context.Context, c client.Reader, req ctrl.Request) (P, error) {
	obj := P(new(T))
	if err := c.Get(ctx, req.NamespacedName, obj); err != nil {
		return nil, client.IgnoreNotFound(err)
	}
	if obj.GetDeletionTimestamp() != nil {
		return nil, nil
	}
	return obj, nil
}

// statusObject is a pointer to a kind whose status the controllers write.
type statusObject[T any] interface {
	objectPtr[T]
	DeepCopy() *T
	GetConditions() []metav1.Condition
}

// statusPass is what one kind's controller adds to reconcileStatus.
type statusPass[P any] struct {
	// kind names the kind in log lines.
	kind string
	// compute sets obj's status; it returns the result to requeue with
	// and whether the patch must lock (see patchStatus).
	compute func(ctx context.Context, obj P) (result ctrl.Result, lock bool, err error)
	// quiet, if set, tells a Ready transition not worth an event.
	quiet func(orig P, ready *metav1.Condition) bool
	// patched, if set, is told of every status patch the pass wrote, with
	// the object before and after: the change events webhooks deliver
	// are the transitions kurz wrote, so a pass that fails to write sends
	// none and the next pass (or leader) sees the change again.
	patched func(ctx context.Context, orig, obj P)
}

// reconcileStatus is a status controller's Reconcile: it reads the object
// of req (getLive), has pass compute its status, patches the status when
// it changed and records an event for the Ready transition it wrote.
func reconcileStatus[T any, P statusObject[T]](ctx context.Context, c client.Client, rec events.EventRecorder, req ctrl.Request, pass statusPass[P]) (ctrl.Result, error) {
	obj, err := getLive[T, P](ctx, c, req)
	if obj == nil || err != nil {
		return ctrl.Result{}, err
	}
	orig := P(obj.DeepCopy())
	result, lock, err := pass.compute(ctx, obj)
	if err != nil {
		return ctrl.Result{}, err
	}
	patched, retry, err := patchChangedStatus(ctx, c, orig, obj, lock, pass.kind)
	if err != nil || !retry.IsZero() {
		return retry, err
	}
	ready := readyChanged(orig.GetConditions(), obj.GetConditions())
	if patched && ready != nil && (pass.quiet == nil || !pass.quiet(orig, ready)) {
		recordTransition(rec, obj, ready)
	}
	if patched && pass.patched != nil {
		pass.patched(ctx, orig, obj)
	}
	return result, nil
}

// patchChangedStatus patches obj's status when it differs from orig's (see
// patchStatus for lock) and says whether it did. A pass that lost an
// optimistic-lock race is not an error: it returns a non-zero retry, to run
// again after conflictRetry; logKey names the kind in the log line.
func patchChangedStatus(ctx context.Context, c client.Client, orig, obj client.Object, lock bool, logKey string) (patched bool, retry ctrl.Result, err error) {
	if apiequality.Semantic.DeepEqual(statusOf(orig), statusOf(obj)) {
		return false, retry, nil
	}
	if err := patchStatus(ctx, c, orig, obj, lock); err != nil {
		if apierrors.IsConflict(err) {
			ctrl.LoggerFrom(ctx).V(1).Info("status changed meanwhile, retrying", logKey, klog.KObj(obj))
			return false, ctrl.Result{RequeueAfter: conflictRetry}, nil
		}
		return false, retry, err
	}
	return true, retry, nil
}

// statusController starts the controller named name for obj, with
// workers concurrent reconciles, that ignores updates leaving
// metadata.generation alone (status writes, label and annotation edits)
// and the events more filters drop.
func statusController(mgr ctrl.Manager, name string, obj client.Object, workers int, more ...predicate.Predicate) *builder.Builder {
	return ctrl.NewControllerManagedBy(mgr).
		Named(name).
		For(obj, builder.WithPredicates(append([]predicate.Predicate{predicate.GenerationChangedPredicate{}}, more...)...)).
		WithOptions(controller.Options{MaxConcurrentReconciles: max(workers, 1)})
}

// watchDomains makes b reconcile what toRequests maps a Domain to, when a
// Domain appears, leaves, changes its spec or records its claim.
func watchDomains(b *builder.Builder, toRequests handler.MapFunc) *builder.Builder {
	return b.Watches(&kurzv1alpha1.Domain{}, handler.EnqueueRequestsFromMapFunc(toRequests),
		builder.WithPredicates(domainEventsForLinks...))
}

// domainEventsForLinks are the Domain events that can change a Link's
// status: a Domain appearing after the first list, leaving, changing its
// spec or recording its claim.
var domainEventsForLinks = []predicate.Predicate{specOrClaimChanged, notInInitialList}
