package restapi

import (
	"context"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
)

// awaitWrite waits (at most opts.WriteWait) until the list index, and so
// the informer cache behind it, holds obj at its current resourceVersion:
// the caller's next read then sees its write. A timeout is logged, not
// returned: the write succeeded.
func (k *resource[T, V]) awaitWrite(ctx context.Context, s *server, obj T) {
	wctx, cancel := s.writeContext(ctx)
	defer cancel()
	if err := k.writes.WaitFor(wctx, obj.GetUID(), obj.GetResourceVersion(), false); err != nil {
		logf.FromContext(ctx).Info("write not yet visible in the cache", "object", client.ObjectKeyFromObject(obj), "error", err.Error())
	}
}

// awaitDelete waits until the index no longer holds the deleted object or,
// when finalizers hold it back, holds its terminating state (which every
// read treats as gone).
func (k *resource[T, V]) awaitDelete(ctx context.Context, s *server, obj T) {
	wctx, cancel := s.writeContext(ctx)
	defer cancel()
	uid := obj.GetUID()
	fresh := k.newObject()
	err := s.live.Get(wctx, client.ObjectKeyFromObject(obj), fresh)
	switch {
	case err == nil && fresh.GetUID() == uid:
		err = k.writes.WaitFor(wctx, uid, fresh.GetResourceVersion(), false)
	case err == nil || apierrors.IsNotFound(err):
		err = k.writes.WaitFor(wctx, uid, "", true)
	}
	if err != nil {
		logf.FromContext(ctx).Info("delete not yet visible in the cache", "object", client.ObjectKeyFromObject(obj), "error", err.Error())
	}
}

// writeContext bounds the wait for the cache to observe a write.
func (s *server) writeContext(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, s.opts.WriteWait)
}
