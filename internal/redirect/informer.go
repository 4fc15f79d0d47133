package redirect

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/types"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kurzv1alpha1 "github.com/kurz-dev/kurz/api/v1alpha1"
	"github.com/kurz-dev/kurz/internal/initialevents"
)

// watch feeds the index from the Link and Domain informers of c, and from
// initialLinks (nil: none) while the Link informer's first list streams. Event
// handlers run as the informer delivers, so the index follows a change within
// the watch latency. The returned functions report whether the index holds
// each informer's initial list: from its handler, or from initialLinks.
func (ix *Index) watch(ctx context.Context, c cache.Informers, initialLinks *initialevents.Feed[*kurzv1alpha1.Link]) ([]toolscache.InformerSynced, error) {
	linkSynced, err := feed(ctx, c, "Link", initialLinks, ix.UpsertLink, ix.DeleteLink)
	if err != nil {
		return nil, err
	}
	domainSynced, err := feed(ctx, c, "Domain", nil, ix.UpsertDomain, ix.DeleteDomain)
	if err != nil {
		return nil, err
	}
	return []toolscache.InformerSynced{linkSynced, domainSynced}, nil
}

// feed hands every event of c's informer of T (named kind in errors) to
// upsert or, for deletes, to remove, and returns whether the index holds
// the informer's initial list. Objects of another type are ignored. With
// initial, that list comes from it as it streams and the handler skips its
// adds.
func feed[T any, P interface {
	*T
	client.Object
}](ctx context.Context, c cache.Informers, kind string, initial *initialevents.Feed[P], upsert func(P), remove func(types.NamespacedName)) (toolscache.InformerSynced, error) {
	inf, err := c.GetInformer(ctx, P(new(T)))
	if err != nil {
		return nil, fmt.Errorf("get %s informer: %w", kind, err)
	}
	if initial != nil {
		if err := initial.Add(sink[P]{upsert: upsert, remove: remove}); err != nil {
			return nil, fmt.Errorf("feed %ss: %w", kind, err)
		}
	}
	on := func(o any, deleted bool) {
		obj, ok := unwrapDeleted(o).(P)
		if !ok {
			return
		}
		if deleted {
			remove(types.NamespacedName{Namespace: obj.GetNamespace(), Name: obj.GetName()})
			return
		}
		upsert(obj)
	}
	reg, err := inf.AddEventHandler(toolscache.ResourceEventHandlerDetailedFuncs{
		AddFunc: func(o any, isInInitialList bool) {
			if !initial.Skip(isInInitialList) {
				on(o, false)
			}
		},
		UpdateFunc: func(_, o any) { on(o, false) },
		DeleteFunc: func(o any) { on(o, true) },
	})
	if err != nil {
		return nil, fmt.Errorf("watch %ss: %w", kind, err)
	}
	if initial == nil {
		return reg.HasSynced, nil
	}
	// Once fed, the index holds the whole initial list, as of its bookmark:
	// what the handler still has to do for that list is skip its adds.
	// Waiting for that as well kept a replica of 100 000 Links from
	// serving for 0.6-0.8 s past its caches' sync, behind the listener's
	// backlog of skips (docs/scaling.md, "Serving once the index holds the
	// list"). Later events reach the index behind that backlog, as they
	// would at any time.
	return func() bool {
		_, fed := initial.Fed()
		return fed || reg.HasSynced()
	}, nil
}

// unwrapDeleted returns the object of a delete event, which is a tombstone
// when the informer missed the delete during a relist.
func unwrapDeleted(o any) any {
	if t, ok := o.(toolscache.DeletedFinalStateUnknown); ok {
		return t.Obj
	}
	return o
}

// sink is upsert and remove as an initialevents.Sink.
type sink[P client.Object] struct {
	upsert func(P)
	remove func(types.NamespacedName)
}

func (s sink[P]) Upsert(obj P) { s.upsert(obj) }
func (s sink[P]) Delete(obj P) {
	s.remove(types.NamespacedName{Namespace: obj.GetNamespace(), Name: obj.GetName()})
}
