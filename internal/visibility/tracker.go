package visibility

import (
	"context"
	"fmt"
	"strconv"
	"sync"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// View is what Track needs of a view: the object it holds for a uid, and a
// call after every change (pagination.Index has both).
type View[T client.Object] interface {
	Get(uid types.UID) (T, bool)
	OnChange(f func())
}

// Holds is how a Tracker asks its view about a write of obj (named by its
// uid, namespace and name): whether the view has it at resourceVersion rv
// or a later one or, when deleted is true (rv is then 0), whether it has
// the object's delete.
type Holds func(obj client.Object, rv uint64, deleted bool) bool

// Tracker tells writers when a view holds their writes.
type Tracker struct {
	holds Holds

	mu sync.Mutex
	// changed is closed and cleared on every change of the view; WaitFor
	// creates it lazily, so an informer sync with no one waiting allocates
	// nothing.
	changed chan struct{}
}

// Track returns a Tracker of v, which holds a write when it has the
// object's uid at that resourceVersion or a later one, and a delete when it
// no longer has the uid. Call it before v is fed: it registers itself with
// v.OnChange.
func Track[T client.Object](v View[T]) *Tracker {
	t := New(func(obj client.Object, rv uint64, deleted bool) bool {
		held, ok := v.Get(obj.GetUID())
		if deleted {
			return !ok
		}
		return ok && ParseRV(held.GetResourceVersion()) >= rv
	})
	v.OnChange(t.Changed)
	return t
}

// New returns a Tracker of a view that holds answers; the view calls
// Changed after every change.
func New(holds Holds) *Tracker {
	return &Tracker{holds: holds}
}

// Changed wakes every waiter to look again.
func (t *Tracker) Changed() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.changed != nil {
		close(t.changed)
		t.changed = nil
	}
}

// Waiting reports whether a WaitFor is blocked on the tracker (tests use
// it to make a change only once someone waits for it).
func (t *Tracker) Waiting() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.changed != nil
}

// WaitFor blocks until the view holds the write of obj at resourceVersion
// rv or, when deleted is true, its delete (rv is then unused).
// resourceVersions are etcd revisions, compared as numbers.
func (t *Tracker) WaitFor(ctx context.Context, obj client.Object, rv string, deleted bool) error {
	var want uint64
	if !deleted {
		var err error
		if want, err = strconv.ParseUint(rv, 10, 64); err != nil {
			return fmt.Errorf("waiting for %s: resourceVersion %q is not a number: %w", obj.GetUID(), rv, err)
		}
	}
	for {
		if t.holds(obj, want, deleted) {
			return nil
		}
		t.mu.Lock()
		if t.changed == nil {
			t.changed = make(chan struct{})
		}
		ch := t.changed
		t.mu.Unlock()
		// Look again now that ch is taken: a change between the first look
		// and taking ch closed no channel this waiter holds.
		if t.holds(obj, want, deleted) {
			return nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return fmt.Errorf("waiting for %s to reach the view: %w", obj.GetUID(), ctx.Err())
		}
	}
}

// ParseRV reads a resourceVersion; one that is not a number counts as 0.
func ParseRV(rv string) uint64 {
	n, err := strconv.ParseUint(rv, 10, 64)
	if err != nil {
		return 0
	}
	return n
}
