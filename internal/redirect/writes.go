package redirect

import (
	"context"
	"strconv"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kurzv1alpha1 "github.com/kurz-dev/kurz/api/v1alpha1"
	"github.com/kurz-dev/kurz/internal/visibility"
)

// taken is how far the index has followed one kind's informer: the newest
// resourceVersion among the objects it has taken, and the Tracker its
// writers wait on. Fields change under Index.wmu.
//
// The index keeps no resourceVersion per object (8 bytes a Link, 16 with
// the size class): a watch delivers a kind's events in resourceVersion
// order, so once the index has taken one at or past a write's, it has the
// write. Only a relist (after a watch broke) hands objects over in no
// order, and can end a wait up to the rest of that list early. Creates
// and deletes are exact all the same: they wait for the object's uid to
// appear in its record or to leave it.
type taken struct {
	rv     uint64
	writes *visibility.Tracker
}

// take moves t past o's resourceVersion. Caller holds Index.wmu.
func (t *taken) take(o client.Object) {
	if rv, err := strconv.ParseUint(o.GetResourceVersion(), 10, 64); err == nil && rv > t.rv {
		t.rv = rv
	}
}

// WaitFor blocks until the index holds the Link or Domain obj names (its
// uid) with every write up to resourceVersion rv or, when deleted is true,
// holds no record of that uid; ctx bounds the wait. Other kinds return at
// once. The API server calls it after its own lists hold a write, so a
// click sent once the answer is in finds what was written.
func (ix *Index) WaitFor(ctx context.Context, obj client.Object, rv string, deleted bool) error {
	switch obj.(type) {
	case *kurzv1alpha1.Link:
		return ix.linksTaken.writes.WaitFor(ctx, obj, rv, deleted)
	case *kurzv1alpha1.Domain:
		return ix.domainsTaken.writes.WaitFor(ctx, obj, rv, deleted)
	}
	return nil
}

// heldLink is what visibility asks of the Link obj names: held when its
// record has obj's uid, at the newest resourceVersion taken.
func (ix *Index) heldLink(obj client.Object) (uint64, bool) {
	ix.wmu.Lock()
	defer ix.wmu.Unlock()
	rec := ix.links[obj.GetNamespace()][obj.GetName()]
	if rec == nil || rec.entry.uid != obj.GetUID() {
		return 0, false
	}
	return ix.linksTaken.rv, true
}

// heldDomain is heldLink for Domains.
func (ix *Index) heldDomain(obj client.Object) (uint64, bool) {
	ix.wmu.Lock()
	defer ix.wmu.Unlock()
	rec := ix.domains[types.NamespacedName{Namespace: obj.GetNamespace(), Name: obj.GetName()}]
	if rec == nil || rec.uid != obj.GetUID() {
		return 0, false
	}
	return ix.domainsTaken.rv, true
}
