package apiserver

import (
	"context"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/kurz-dev/kurz/internal/pagination"
)

// maxWriteAttempts bounds the retries of a write that conflicts with a
// concurrent one (the controller stamping, another replica updating).
const maxWriteAttempts = 5

// stamp records the created/updated times of obj right after the API wrote
// it, so the answer already carries the final times: a status patch with an
// optimistic lock, re-read and retried when the controller (or anyone) got
// there first. When the stamp is already there (stampFn reports no change),
// nothing is written. A failure is logged, not returned: the write itself
// succeeded, and the controller stamps what the API could not. obj holds
// the latest known state on return.
func stamp[T client.Object](ctx context.Context, s *server, obj T, stampFn func(T, time.Time) bool) {
	log := logf.FromContext(ctx)
	for attempt := 1; ; attempt++ {
		orig := obj.DeepCopyObject().(T)
		if !stampFn(obj, s.now()) {
			return
		}
		err := s.client.Status().Patch(ctx, obj, client.MergeFromWithOptions(orig, client.MergeFromWithOptimisticLock{}))
		if err == nil {
			return
		}
		restore(obj, orig)
		if !apierrors.IsConflict(err) || attempt == maxWriteAttempts {
			log.Info("could not stamp created/updated times; the controller will", "object", client.ObjectKeyFromObject(obj), "error", err.Error())
			return
		}
		if err := s.live.Get(ctx, client.ObjectKeyFromObject(obj), obj); err != nil {
			log.Info("could not re-read after a stamp conflict", "object", client.ObjectKeyFromObject(obj), "error", err.Error())
			restore(obj, orig)
			return
		}
	}
}

// restore copies src's state into dst (both of the same kind).
func restore[T client.Object](dst, src T) {
	any(src).(interface{ DeepCopyInto(T) }).DeepCopyInto(dst)
}

// awaitWrite waits (at most opts.WriteWait) until the list index, and so
// the informer cache behind it, holds obj at its current resourceVersion:
// the caller's next read then sees its write. A timeout is logged, not
// returned: the write succeeded.
func awaitWrite[T client.Object](ctx context.Context, s *server, ix *pagination.Index[T], obj T) {
	wctx, cancel := s.writeContext(ctx)
	defer cancel()
	if err := ix.WaitFor(wctx, obj.GetUID(), obj.GetResourceVersion(), false); err != nil {
		logf.FromContext(ctx).Info("write not yet visible in the cache", "object", client.ObjectKeyFromObject(obj), "error", err.Error())
	}
}

// awaitDelete waits until the index no longer holds the deleted object or,
// when finalizers hold it back, holds its terminating state (which every
// read treats as gone).
func awaitDelete[T client.Object](ctx context.Context, s *server, ix *pagination.Index[T], obj, fresh T) {
	wctx, cancel := s.writeContext(ctx)
	defer cancel()
	uid := obj.GetUID()
	err := s.live.Get(wctx, types.NamespacedName{Namespace: obj.GetNamespace(), Name: obj.GetName()}, fresh)
	switch {
	case err == nil && fresh.GetUID() == uid:
		err = ix.WaitFor(wctx, uid, fresh.GetResourceVersion(), false)
	case err == nil || apierrors.IsNotFound(err):
		err = ix.WaitFor(wctx, uid, "", true)
	}
	if err != nil {
		logf.FromContext(ctx).Info("delete not yet visible in the cache", "object", client.ObjectKeyFromObject(obj), "error", err.Error())
	}
}

// specPatch is how the API writes an update: a JSON merge patch of what
// the request changed since orig, under orig's resourceVersion. An Update
// would send the cached object whole, and the cache drops what no role
// reads (managedFields, kubectl's last-applied annotation): the write would
// delete them on the server.
func specPatch(orig client.Object) client.Patch {
	return client.MergeFromWithOptions(orig, client.MergeFromWithOptimisticLock{})
}
