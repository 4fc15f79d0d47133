package restapi

import (
	"context"
	"net/http"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
)

// writeRetry bounds the retries of a write that conflicts with a
// concurrent one (the controller stamping, a click flush, another replica
// updating): five attempts, about 10 ms apart.
var writeRetry = retry.DefaultRetry

// update applies apply to cur and writes it. When someone else wrote in
// between (a click flush, kubectl), it applies the request again to what
// is there now, unless the object is gone or replaced: that is "not found".
// It returns the object as written. The write is a patch (specPatch), never
// the cached object whole.
func (k *resource[T, V]) update(ctx context.Context, s *server, cur T, apply func(T)) (T, error) {
	obj, first := cur, true
	err := retry.RetryOnConflict(writeRetry, func() error {
		if !first {
			fresh := k.newObject()
			if err := s.live.Get(ctx, client.ObjectKeyFromObject(cur), fresh); err != nil {
				return err
			}
			if fresh.GetUID() != cur.GetUID() || fresh.GetDeletionTimestamp() != nil {
				return k.notFound()
			}
			obj = fresh
		}
		first = false
		orig := obj.DeepCopyObject().(client.Object)
		apply(obj)
		return s.client.Patch(ctx, obj, specPatch(orig))
	})
	if err != nil {
		return obj, k.writeError(ctx, s, cur, err)
	}
	return obj, nil
}

// delete deletes obj, provided its name still belongs to it (uid
// precondition).
func (k *resource[T, V]) delete(ctx context.Context, s *server, obj T) error {
	uid := obj.GetUID()
	if err := s.client.Delete(ctx, obj, client.Preconditions{UID: &uid}); err != nil {
		return k.writeError(ctx, s, obj, err)
	}
	return nil
}

// writeError says "not found" for a write that failed because obj was
// deleted or replaced (its name now holds another object) while the request
// was served. A live read decides, not the error's text: a conflict may be
// a stale resourceVersion or a failed uid precondition, and only the
// object's current state tells which.
func (k *resource[T, V]) writeError(ctx context.Context, s *server, obj T, err error) error {
	if apierrors.IsNotFound(err) {
		return k.notFound()
	}
	if !apierrors.IsConflict(err) {
		return err
	}
	fresh := k.newObject()
	switch gerr := s.live.Get(ctx, client.ObjectKeyFromObject(obj), fresh); {
	case apierrors.IsNotFound(gerr):
		return k.notFound()
	case gerr == nil && (fresh.GetUID() != obj.GetUID() || fresh.GetDeletionTimestamp() != nil):
		return k.notFound()
	}
	return err
}

// prepared is a validated create or update under its claim lock (see
// lockedInput), not written yet: apply sets the object's spec from the
// body, stamp its status times (and what else the answer must already
// show; nil when the write itself carries them), workspaceID is the
// caller's workspace id for the view. The caller must call unlock.
type prepared[T client.Object] struct {
	apply       func(T)
	stamp       func(T, time.Time) bool
	workspaceID string
	unlock      func()
}

// prepareFunc prepares a create (cur is nil) or an update of cur.
type prepareFunc[T client.Object] func(r *http.Request, c *caller, cur T) (prepared[T], error)

// create answers POST on the list endpoint: prepare the write (no current
// object), build the object in the caller's workspace, write it with
// write and answer 201.
func (k *resource[T, V]) create(s *server, w http.ResponseWriter, r *http.Request, c *caller,
	prepare prepareFunc[T], write func(context.Context, T) error) error {
	var none T
	return k.write(s, w, r, c, http.StatusCreated, none, prepare, func(ctx context.Context, p prepared[T]) (T, error) {
		obj := k.newObject()
		obj.SetNamespace(c.workspace)
		p.apply(obj)
		return obj, write(ctx, obj)
	})
}

// replace answers PUT on an object's endpoint: find it, prepare the write
// against it, update it and answer 200.
func (k *resource[T, V]) replace(s *server, w http.ResponseWriter, r *http.Request, c *caller, prepare prepareFunc[T]) error {
	cur, err := k.find(r.Context(), s, c, r.PathValue("id"))
	if err != nil {
		return err
	}
	return k.write(s, w, r, c, http.StatusOK, cur, prepare, func(ctx context.Context, p prepared[T]) (T, error) {
		return k.update(ctx, s, cur, p.apply)
	})
}

// write is what create and replace share: prepare the write against cur,
// do it with do under the claim lock, and answer status with the object
// as written (see answerWrite).
func (k *resource[T, V]) write(s *server, w http.ResponseWriter, r *http.Request, c *caller, status int, cur T,
	prepare prepareFunc[T], do func(context.Context, prepared[T]) (T, error)) error {
	p, err := prepare(r, c, cur)
	if err != nil {
		return err
	}
	defer p.unlock()
	obj, err := do(r.Context(), p)
	if err != nil {
		return err
	}
	k.answerWrite(r.Context(), s, w, status, obj, p.stamp, p.workspaceID)
	return nil
}

// answerWrite finishes a create or update: it stamps obj's times, waits
// until the list index holds it (so the caller's next list shows it) and
// answers its view with status.
func (k *resource[T, V]) answerWrite(ctx context.Context, s *server, w http.ResponseWriter, status int, obj T, stampFn func(T, time.Time) bool, workspaceID string) {
	stamp(ctx, s, obj, stampFn)
	k.awaitWrite(ctx, s, obj)
	writeJSON(w, status, k.view(obj, workspaceID))
}

// remove answers DELETE on an object's endpoint: find it, delete it, wait
// until the list index no longer shows it, and answer message.
func (k *resource[T, V]) remove(s *server, w http.ResponseWriter, r *http.Request, c *caller, message string) error {
	ctx := r.Context()
	obj, err := k.find(ctx, s, c, r.PathValue("id"))
	if err != nil {
		return err
	}
	if err := k.delete(ctx, s, obj); err != nil {
		return err
	}
	k.awaitDelete(ctx, s, obj)
	writeJSON(w, http.StatusOK, messageBody{Message: message})
	return nil
}

// stamp records the created/updated times of obj right after the API wrote
// it, so the answer already carries the final times (nothing when stampFn
// is nil: a created Link carries them, see createLinkObject): a status
// patch with an optimistic lock, re-read and retried when the controller
// (or anyone) got there first. When the stamp is already there (stampFn
// reports no change), nothing is written. A failure is logged, not returned: the write itself
// succeeded, and the controller stamps what the API could not. obj holds
// the latest known state on return.
func stamp[T client.Object](ctx context.Context, s *server, obj T, stampFn func(T, time.Time) bool) {
	if stampFn == nil {
		return
	}
	log := logf.FromContext(ctx)
	err := retry.RetryOnConflict(writeRetry, func() error {
		orig := obj.DeepCopyObject().(T)
		if !stampFn(obj, s.now()) {
			return nil
		}
		err := s.client.Status().Patch(ctx, obj, client.MergeFromWithOptions(orig, client.MergeFromWithOptimisticLock{}))
		if err == nil {
			return nil
		}
		restore(obj, orig)
		if !apierrors.IsConflict(err) {
			return err
		}
		if gerr := s.live.Get(ctx, client.ObjectKeyFromObject(obj), obj); gerr != nil {
			restore(obj, orig)
			return gerr
		}
		return err
	})
	if err != nil {
		log.Info("could not stamp created/updated times; the controller will", "object", client.ObjectKeyFromObject(obj), "error", err.Error())
	}
}

// restore copies src's state into dst (both of the same kind).
func restore[T client.Object](dst, src T) {
	any(src).(interface{ DeepCopyInto(T) }).DeepCopyInto(dst)
}

// specPatch is how the API writes an update: a JSON merge patch of what
// the request changed since orig, under orig's resourceVersion. An Update
// would send the cached object whole, and the cache drops what no role
// reads (managedFields, kubectl's last-applied annotation): the write would
// delete them on the server.
func specPatch(orig client.Object) client.Patch {
	return client.MergeFromWithOptions(orig, client.MergeFromWithOptimisticLock{})
}
