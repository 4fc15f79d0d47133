package restapi

import (
	"context"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/kurz-dev/kurz/internal/visibility"
)

// Served is the redirect index of this process (redirect.Index): the
// answer to a write waits for it as for the API's own lists.
type Served interface {
	// WaitFor blocks until the index has the write of obj at
	// resourceVersion rv or, when deleted, obj's delete.
	WaitFor(ctx context.Context, obj client.Object, rv string, deleted bool) error
}

// awaitWrite waits (at most opts.WriteWait) until the list index, and so
// the informer cache behind it, holds obj at its current resourceVersion:
// the caller's next read then sees its write. With a redirect server in
// this process it then waits for that server's index too, so a click sent
// once the answer is in finds the write. A timeout is logged, not
// returned: the write succeeded.
func (k *resource[T, V]) awaitWrite(ctx context.Context, s *server, obj T) {
	wctx, cancel := s.writeContext(ctx)
	defer cancel()
	if err := s.await(wctx, k.writes, obj, obj.GetResourceVersion(), false); err != nil {
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
		err = s.await(wctx, k.writes, fresh, fresh.GetResourceVersion(), false)
	case err == nil || apierrors.IsNotFound(err):
		err = s.await(wctx, k.writes, obj, "", true)
	}
	if err != nil {
		logf.FromContext(ctx).Info("delete not yet visible in the cache", "object", client.ObjectKeyFromObject(obj), "error", err.Error())
	}
}

// await waits for a list index (its tracker, lists), then for the redirect
// index if this process has one, to hold obj at rv (or, deleted, to hold
// it no more).
func (s *server) await(ctx context.Context, lists *visibility.Tracker, obj client.Object, rv string, deleted bool) error {
	if err := lists.WaitFor(ctx, obj, rv, deleted); err != nil {
		return err
	}
	if s.opts.Served == nil {
		return nil
	}
	return s.opts.Served.WaitFor(ctx, obj, rv, deleted)
}

// writeContext bounds the wait for the cache to observe a write.
func (s *server) writeContext(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, s.opts.WriteWait)
}
