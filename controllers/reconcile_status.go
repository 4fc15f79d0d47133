package controllers

import (
	"context"

	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
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
// metadata.generation alone (status writes, label and annotation edits).
func statusController(mgr ctrl.Manager, name string, obj client.Object, workers int) *builder.Builder {
	return ctrl.NewControllerManagedBy(mgr).
		Named(name).
		For(obj, specChanged()).
		WithOptions(controller.Options{MaxConcurrentReconciles: max(workers, 1)})
}

// specChanged passes only the events that change metadata.generation.
func specChanged() builder.Predicates {
	return builder.WithPredicates(predicate.GenerationChangedPredicate{})
}

// watchDomains makes b reconcile what toRequests maps a Domain to, when a
// Domain appears, leaves, changes its spec or records its claim.
func watchDomains(b *builder.Builder, toRequests handler.MapFunc) *builder.Builder {
	return b.Watches(&kurzv1alpha1.Domain{}, handler.EnqueueRequestsFromMapFunc(toRequests),
		builder.WithPredicates(specOrClaimChanged))
}
