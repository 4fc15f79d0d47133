package pagination

import (
	"fmt"
	"strconv"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kurz-dev/kurz/internal/initialevents"
)

// EventSource is the part of a controller-runtime cache.Informer (or a
// client-go shared informer) that Register needs.
type EventSource interface {
	AddEventHandler(handler toolscache.ResourceEventHandler) (toolscache.ResourceEventHandlerRegistration, error)
}

// Index keeps the objects of each namespace ordered newest first (created
// time descending, then uid descending) so that list pages are cut in
// O(log n + limit). It holds the informer's pointers, never copies, and is
// safe for concurrent use.
type Index[T client.Object] struct {
	createdAt func(T) time.Time

	mu    sync.RWMutex
	items map[types.UID]item[T]
	trees map[string]*tree[T]
	// onChange is told after every change (OnChange).
	onChange func()
}

// item is what the index remembers per uid to find and move its entry:
// 32 bytes. It points at its namespace's tree rather than naming the
// namespace: 8 bytes less in a map of every object.
type item[T object] struct {
	tree *tree[T]
	sec  int64
	nsec int32
	rv   uint64
}

func (it item[T]) key(uid types.UID) sortKey { return sortKey{sec: it.sec, nsec: it.nsec, uid: uid} }

// NewIndex returns an empty index ordering objects by createdAt.
func NewIndex[T client.Object](createdAt func(T) time.Time) *Index[T] {
	return &Index[T]{
		createdAt: createdAt,
		items:     map[types.UID]item[T]{},
		trees:     map[string]*tree[T]{},
	}
}

// Register feeds the index from an informer's add, update and delete events.
func (ix *Index[T]) Register(informer EventSource) error {
	return Register[T](informer, nil, ix)
}

// Sink is what informer events feed: an Index, or another index kept
// beside one.
type Sink[T client.Object] = initialevents.Sink[T]

// Register feeds sinks, in order, from one handler of an informer's add,
// update and delete events. Each handler of an informer runs on its own
// goroutine, at its own pace; sinks fed by one handler see every event at
// the same time, so a writer waiting for the last of them (see
// internal/visibility) finds the write in all of them.
//
// With a feed (the informer's ListerWatcher wrapped by it), the sinks are
// given the informer's initial list while it streams, and the handler skips
// that list's adds; nil: the handler feeds them all.
func Register[T client.Object](informer EventSource, feed *initialevents.Feed[T], sinks ...Sink[T]) error {
	each := func(obj any, f func(Sink[T], T)) {
		if o, ok := obj.(T); ok {
			for _, s := range sinks {
				f(s, o)
			}
		}
	}
	if feed != nil {
		if err := feed.Add(sinks...); err != nil {
			return fmt.Errorf("registering pagination index handler: %w", err)
		}
	}
	_, err := informer.AddEventHandler(toolscache.ResourceEventHandlerDetailedFuncs{
		AddFunc: func(obj any, isInInitialList bool) {
			if !feed.Skip(isInInitialList) {
				each(obj, Sink[T].Upsert)
			}
		},
		UpdateFunc: func(_, obj any) { each(obj, Sink[T].Upsert) },
		DeleteFunc: func(obj any) {
			if d, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
				obj = d.Obj
			}
			each(obj, Sink[T].Delete)
		},
	})
	if err != nil {
		return fmt.Errorf("registering pagination index handler: %w", err)
	}
	return nil
}

// Upsert adds obj or moves it to its current place. An object older than the
// one indexed (lower resourceVersion) is ignored, so a caller that feeds a
// write's answer cannot undo a newer informer event.
func (ix *Index[T]) Upsert(obj T) {
	if ix.upsert(obj) && ix.onChange != nil {
		ix.onChange()
	}
}

// upsert is Upsert under the lock; it reports whether the index changed.
func (ix *Index[T]) upsert(obj T) bool {
	uid := obj.GetUID()
	if uid == "" {
		return false
	}
	t := ix.createdAt(obj)
	k := sortKey{sec: t.Unix(), nsec: int32(t.Nanosecond()), uid: uid}
	rv := parseRV(obj.GetResourceVersion())
	ns := obj.GetNamespace()

	ix.mu.Lock()
	defer ix.mu.Unlock()
	if old, ok := ix.items[uid]; ok {
		if rv != 0 && rv < old.rv {
			return false
		}
		if old.tree.namespace != ns || old.key(uid) != k {
			ix.removeLocked(uid, old)
		}
	}
	tr := ix.trees[ns]
	if tr == nil {
		tr = newTree[T](ns)
		ix.trees[ns] = tr
	}
	tr.insert(k, obj)
	ix.items[uid] = item[T]{tree: tr, sec: k.sec, nsec: k.nsec, rv: rv}
	return true
}

// Delete removes obj (found by uid; the rest of obj may be stale).
func (ix *Index[T]) Delete(obj T) {
	if ix.delete(obj.GetUID()) && ix.onChange != nil {
		ix.onChange()
	}
}

// delete is Delete under the lock; it reports whether the index changed.
func (ix *Index[T]) delete(uid types.UID) bool {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	old, ok := ix.items[uid]
	if !ok {
		return false
	}
	ix.removeLocked(uid, old)
	delete(ix.items, uid)
	return true
}

// OnChange makes the index call f after every change (an insert, a move,
// a delete), outside its lock, so that what f reads sees the change. Call
// it before the index is fed. Read-your-writes waiting
// (internal/visibility) is built on it.
func (ix *Index[T]) OnChange(f func()) { ix.onChange = f }

func (ix *Index[T]) removeLocked(uid types.UID, it item[T]) {
	tr := it.tree
	tr.remove(it.key(uid))
	if tr.len() == 0 && ix.trees[tr.namespace] == tr {
		delete(ix.trees, tr.namespace)
	}
}

// Page returns up to limit objects of namespace from position offset
// (0-based, newest first) and the namespace's total. A negative offset
// counts as 0; an offset past the end gives no items.
func (ix *Index[T]) Page(namespace string, offset, limit int) (items []T, total int) {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	tr := ix.trees[namespace]
	if tr == nil {
		return []T{}, 0
	}
	total = tr.len()
	n := 0
	if offset >= 0 && offset < total && limit > 0 {
		n = min(limit, total-offset)
	}
	return tr.slice(offset, limit, make([]T, 0, n)), total
}

// Get returns the indexed object with uid, if any.
func (ix *Index[T]) Get(uid types.UID) (T, bool) {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	var zero T
	it, ok := ix.items[uid]
	if !ok {
		return zero, false
	}
	return it.tree.find(it.key(uid))
}

// parseRV reads a resourceVersion; one that is not a number counts as 0
// (unordered), which never blocks an update.
func parseRV(rv string) uint64 {
	n, err := strconv.ParseUint(rv, 10, 64)
	if err != nil {
		return 0
	}
	return n
}
