package redirect

import (
	"context"
	"sync/atomic"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kurzv1alpha1 "github.com/kurz-dev/kurz/api/v1alpha1"
	"github.com/kurz-dev/kurz/internal/visibility"
)

// taken is how far the index has followed one kind's informer: the newest
// resourceVersion among the objects it has taken, and the Tracker the
// API's writers wait on.
//
// The index keeps no resourceVersion per object (8 bytes a Link, 16 with
// the size class): a watch delivers a kind's events in resourceVersion
// order, so once the index has taken one at or past a write's, it has the
// write. A list (a relist after the watch broke, or a start that fell back
// from the streamed one) hands objects over in no order, and can end a
// wait up to the rest of that list early.
type taken struct {
	// rv is written under Index.wmu, read without it.
	rv     atomic.Uint64
	writes *visibility.Tracker
}

// take moves t past o's resourceVersion. Caller holds Index.wmu.
func (t *taken) take(o client.Object) {
	if rv := visibility.ParseRV(o.GetResourceVersion()); rv > t.rv.Load() {
		t.rv.Store(rv)
	}
}

// holds is the visibility.Holds of one kind's writes, whose records by
// namespace and name recordUID looks up (under Index.wmu). A write is held
// once the index has taken events up to its resourceVersion, whatever the
// record now is (a Link created and deleted since, a Domain whose
// finalizer was lifted). A delete is held once the index has taken the
// object's last version the writer saw (obj's resourceVersion: the index
// may not have had its create yet) and has no record of its uid.
func (ix *Index) holds(t *taken, recordUID func(types.NamespacedName) (types.UID, bool)) visibility.Holds {
	return func(obj client.Object, rv uint64, deleted bool) bool {
		if !deleted {
			return t.rv.Load() >= rv
		}
		if t.rv.Load() < visibility.ParseRV(obj.GetResourceVersion()) {
			return false
		}
		ix.wmu.Lock()
		defer ix.wmu.Unlock()
		uid, ok := recordUID(types.NamespacedName{Namespace: obj.GetNamespace(), Name: obj.GetName()})
		return !ok || uid != obj.GetUID()
	}
}

// linkUID is the uid of the Link record of id. Caller holds wmu.
func (ix *Index) linkUID(id types.NamespacedName) (types.UID, bool) {
	rec := ix.links[id.Namespace][id.Name]
	if rec == nil {
		return "", false
	}
	return rec.entry.uid(), true
}

// domainUID is the uid of the Domain record of id. Caller holds wmu.
func (ix *Index) domainUID(id types.NamespacedName) (types.UID, bool) {
	rec := ix.domains[id]
	if rec == nil {
		return "", false
	}
	return rec.uid, true
}

// WaitFor blocks until the index holds the write of the Link or Domain obj
// at resourceVersion rv or, when deleted is true, its delete; ctx bounds
// the wait. Other kinds return at once. The API server calls it after its
// own lists hold a write, so a click sent once the answer is in follows
// the write.
func (ix *Index) WaitFor(ctx context.Context, obj client.Object, rv string, deleted bool) error {
	switch obj.(type) {
	case *kurzv1alpha1.Link:
		return ix.linksTaken.writes.WaitFor(ctx, obj, rv, deleted)
	case *kurzv1alpha1.Domain:
		return ix.domainsTaken.writes.WaitFor(ctx, obj, rv, deleted)
	}
	return nil
}
