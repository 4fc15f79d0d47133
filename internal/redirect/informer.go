package redirect

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/types"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"

	kurzv1alpha1 "github.com/kurz-dev/kurz/api/v1alpha1"
)

// watch feeds the index from the Link and Domain informers of c. Event
// handlers run as the informer delivers, so the index follows a change within
// the watch latency. The returned functions report whether each handler has
// seen the informer's initial list.
func (ix *Index) watch(ctx context.Context, c cache.Informers) ([]toolscache.InformerSynced, error) {
	linkInf, err := c.GetInformer(ctx, &kurzv1alpha1.Link{})
	if err != nil {
		return nil, fmt.Errorf("get Link informer: %w", err)
	}
	domainInf, err := c.GetInformer(ctx, &kurzv1alpha1.Domain{})
	if err != nil {
		return nil, fmt.Errorf("get Domain informer: %w", err)
	}
	linkReg, err := linkInf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc:    func(o any) { ix.onLink(o, false) },
		UpdateFunc: func(_, o any) { ix.onLink(o, false) },
		DeleteFunc: func(o any) { ix.onLink(o, true) },
	})
	if err != nil {
		return nil, fmt.Errorf("watch Links: %w", err)
	}
	domainReg, err := domainInf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc:    func(o any) { ix.onDomain(o, false) },
		UpdateFunc: func(_, o any) { ix.onDomain(o, false) },
		DeleteFunc: func(o any) { ix.onDomain(o, true) },
	})
	if err != nil {
		return nil, fmt.Errorf("watch Domains: %w", err)
	}
	return []toolscache.InformerSynced{linkReg.HasSynced, domainReg.HasSynced}, nil
}

// unwrapDeleted returns the object of a delete event, which is a tombstone
// when the informer missed the delete during a relist.
func unwrapDeleted(o any) any {
	if t, ok := o.(toolscache.DeletedFinalStateUnknown); ok {
		return t.Obj
	}
	return o
}

func (ix *Index) onLink(o any, deleted bool) {
	l, ok := unwrapDeleted(o).(*kurzv1alpha1.Link)
	if !ok {
		return
	}
	if deleted {
		ix.DeleteLink(types.NamespacedName{Namespace: l.Namespace, Name: l.Name})
		return
	}
	ix.UpsertLink(l)
}

func (ix *Index) onDomain(o any, deleted bool) {
	d, ok := unwrapDeleted(o).(*kurzv1alpha1.Domain)
	if !ok {
		return
	}
	if deleted {
		ix.DeleteDomain(types.NamespacedName{Namespace: d.Namespace, Name: d.Name})
		return
	}
	ix.UpsertDomain(d)
}
