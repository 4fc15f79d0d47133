package manager

import (
	"context"
	"slices"
	"sync"
	"sync/atomic"

	toolscache "k8s.io/client-go/tools/cache"
)

// sharedListener is an informer whose event handlers added before it runs
// share one client-go listener: each event reaches them one after the
// other, in the order they were added, on that listener's goroutine.
//
// client-go gives every handler a listener of its own, and hands each
// event to each listener through two channel sends (to its buffer and
// from it) before the informer takes the next event. A replica's start
// hands 100 000 Links to the handlers kurz adds before the caches start
// (the redirect index, the API's list index, the gauges, the webhooks'
// and analytics' deletes): each listener added about 0.1 s to the time
// from the stream's last Link to the caches' sync
// (BenchmarkInitialListToHandlers), time the replica does not yet serve.
// Those handlers only take the event into memory, so one goroutine calls
// them all in less time than the sends took.
//
// Handlers added once the informer runs get listeners of their own, as
// before: client-go hands each the objects it already holds, which a
// shared listener, past its initial list, would not. So do those added
// with a resync period or options of their own.
type sharedListener struct {
	toolscache.SharedIndexInformer

	mu      sync.Mutex
	running bool
	// reg is the one listener's registration, from the first handler.
	reg toolscache.ResourceEventHandlerRegistration
	// handlers is read by every event, written by the rare remove.
	handlers atomic.Pointer[[]*sharedHandler]
}

func newSharedListener(inf toolscache.SharedIndexInformer) *sharedListener {
	return &sharedListener{SharedIndexInformer: inf}
}

// sharedHandler is one handler of the shared listener, and its
// registration: synced when the listener is (it has delivered the initial
// list to every handler).
type sharedHandler struct {
	toolscache.ResourceEventHandler
	listener toolscache.ResourceEventHandlerRegistration
}

func (h *sharedHandler) HasSynced() bool { return h.listener.HasSynced() }
func (h *sharedHandler) HasSyncedChecker() toolscache.DoneChecker {
	return h.listener.HasSyncedChecker()
}

// AddEventHandler adds h to the shared listener until the informer runs,
// then as client-go does.
func (s *sharedListener) AddEventHandler(h toolscache.ResourceEventHandler) (toolscache.ResourceEventHandlerRegistration, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.running {
		return s.SharedIndexInformer.AddEventHandler(h)
	}
	if s.reg == nil {
		reg, err := s.SharedIndexInformer.AddEventHandler(fanOut{s})
		if err != nil {
			return nil, err
		}
		s.reg = reg
	}
	sh := &sharedHandler{ResourceEventHandler: h, listener: s.reg}
	var next []*sharedHandler
	if cur := s.handlers.Load(); cur != nil {
		next = slices.Clone(*cur)
	}
	next = append(next, sh)
	s.handlers.Store(&next)
	return sh, nil
}

// RemoveEventHandler removes a handler of the shared listener (an event
// being delivered as it is removed may still reach it), or any other as
// client-go does.
func (s *sharedListener) RemoveEventHandler(handle toolscache.ResourceEventHandlerRegistration) error {
	sh, ok := handle.(*sharedHandler)
	if !ok {
		return s.SharedIndexInformer.RemoveEventHandler(handle)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if cur := s.handlers.Load(); cur != nil {
		next := slices.DeleteFunc(slices.Clone(*cur), func(h *sharedHandler) bool { return h == sh })
		s.handlers.Store(&next)
	}
	return nil
}

func (s *sharedListener) Run(stop <-chan struct{}) {
	s.markRunning()
	s.SharedIndexInformer.Run(stop)
}

func (s *sharedListener) RunWithContext(ctx context.Context) {
	s.markRunning()
	s.SharedIndexInformer.RunWithContext(ctx)
}

func (s *sharedListener) markRunning() {
	s.mu.Lock()
	s.running = true
	s.mu.Unlock()
}

// fanOut is the shared listener's handler: each event to every handler.
type fanOut struct{ s *sharedListener }

func (f fanOut) handlers() []*sharedHandler {
	if hs := f.s.handlers.Load(); hs != nil {
		return *hs
	}
	return nil
}

func (f fanOut) OnAdd(obj any, isInInitialList bool) {
	for _, h := range f.handlers() {
		h.OnAdd(obj, isInInitialList)
	}
}

func (f fanOut) OnUpdate(oldObj, newObj any) {
	for _, h := range f.handlers() {
		h.OnUpdate(oldObj, newObj)
	}
}

func (f fanOut) OnDelete(obj any) {
	for _, h := range f.handlers() {
		h.OnDelete(obj)
	}
}
