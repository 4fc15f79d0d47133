package controllers

import (
	"context"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"
	toolscache "k8s.io/client-go/tools/cache"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// A leader term's controllers (New) register event handlers on the
// manager's shared informers: one per watch (controller-runtime's Kind
// source) and one per kind the read-your-writes client reads. Neither ever
// removes its handler, and the informers outlive the term: after K lost
// and regained Leases every Link and Domain event would run K copies of
// each predicate and mapping function. So the term's controllers get the
// cache through termCache, which remembers every handler added through
// it, and termHandlers removes them all when the term ends.

// termCache is the manager's cache as a term's controllers see it: its
// informers add their event handlers to h.
type termCache struct {
	cache.Cache
	h *termHandlers
}

func (c termCache) GetInformer(ctx context.Context, obj client.Object, opts ...cache.InformerGetOption) (cache.Informer, error) {
	inf, err := c.Cache.GetInformer(ctx, obj, opts...)
	if err != nil {
		return nil, err
	}
	return termInformer{Informer: inf, h: c.h}, nil
}

func (c termCache) GetInformerForKind(ctx context.Context, gvk schema.GroupVersionKind, opts ...cache.InformerGetOption) (cache.Informer, error) {
	inf, err := c.Cache.GetInformerForKind(ctx, gvk, opts...)
	if err != nil {
		return nil, err
	}
	return termInformer{Informer: inf, h: c.h}, nil
}

// termInformer is a shared informer whose new handlers belong to a term.
type termInformer struct {
	cache.Informer
	h *termHandlers
}

func (i termInformer) AddEventHandler(handler toolscache.ResourceEventHandler) (toolscache.ResourceEventHandlerRegistration, error) {
	reg, err := i.Informer.AddEventHandler(handler)
	return i.h.add(i.Informer, reg, err)
}

func (i termInformer) AddEventHandlerWithResyncPeriod(handler toolscache.ResourceEventHandler, resync time.Duration) (toolscache.ResourceEventHandlerRegistration, error) {
	reg, err := i.Informer.AddEventHandlerWithResyncPeriod(handler, resync)
	return i.h.add(i.Informer, reg, err)
}

func (i termInformer) AddEventHandlerWithOptions(handler toolscache.ResourceEventHandler, o toolscache.HandlerOptions) (toolscache.ResourceEventHandlerRegistration, error) {
	reg, err := i.Informer.AddEventHandlerWithOptions(handler, o)
	return i.h.add(i.Informer, reg, err)
}

// termHandlers is the event handlers a term added, and a runnable of the
// term that removes them when the term ends.
type termHandlers struct {
	mu    sync.Mutex
	ended bool
	added []termHandler
}

type termHandler struct {
	informer cache.Informer
	reg      toolscache.ResourceEventHandlerRegistration
}

// add keeps a handler just added, or removes it at once when the term has
// ended already (a source that got its informer as the term ended).
func (h *termHandlers) add(inf cache.Informer, reg toolscache.ResourceEventHandlerRegistration, err error) (toolscache.ResourceEventHandlerRegistration, error) {
	if err != nil {
		return reg, err
	}
	h.mu.Lock()
	ended := h.ended
	if !ended {
		h.added = append(h.added, termHandler{informer: inf, reg: reg})
	}
	h.mu.Unlock()
	if ended {
		remove(termHandler{informer: inf, reg: reg})
	}
	return reg, nil
}

// Start waits for the term to end and removes its handlers: from then on
// no event reaches them (a call in progress finishes on its own, into the
// term's shut-down queues).
func (h *termHandlers) Start(ctx context.Context) error {
	<-ctx.Done()
	h.mu.Lock()
	h.ended = true
	added := h.added
	h.added = nil
	h.mu.Unlock()
	for _, a := range added {
		remove(a)
	}
	ctrl.LoggerFrom(ctx).V(1).Info("removed the term's event handlers", "handlers", len(added))
	return nil
}

// remove takes a handler off its informer. It fails only for an informer
// that has stopped, and with it the handler.
func remove(a termHandler) {
	_ = a.informer.RemoveEventHandler(a.reg)
}
