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

// Lookup is how a Tracker asks its view about the object obj names (by
// uid, namespace and name): the resourceVersion it holds the object at,
// and whether it holds it at all.
type Lookup func(obj client.Object) (rv uint64, ok bool)

// Tracker tells writers when a view holds their writes.
type Tracker struct {
	lookup Lookup

	mu sync.Mutex
	// changed is closed and cleared on every change of the view; WaitFor
	// creates it lazily, so an informer sync with no one waiting allocates
	// nothing.
	changed chan struct{}
}

// Track returns a Tracker of v. Call it before v is fed: it registers
// itself with v.OnChange.
func Track[T client.Object](v View[T]) *Tracker {
	t := New(func(obj client.Object) (uint64, bool) {
		held, ok := v.Get(obj.GetUID())
		if !ok {
			return 0, false
		}
		return parseRV(held.GetResourceVersion()), true
	})
	v.OnChange(t.Changed)
	return t
}

// New returns a Tracker of a view that lookup asks; the view calls Changed
// after every change.
func New(lookup Lookup) *Tracker {
	return &Tracker{lookup: lookup}
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

// WaitFor blocks until the view holds obj (its uid) at resourceVersion rv
// or a later one or, when deleted is true, until it holds no such uid (rv
// is then unused). resourceVersions are etcd revisions, compared as
// numbers.
func (t *Tracker) WaitFor(ctx context.Context, obj client.Object, rv string, deleted bool) error {
	var want uint64
	if !deleted {
		var err error
		if want, err = strconv.ParseUint(rv, 10, 64); err != nil {
			return fmt.Errorf("waiting for %s: resourceVersion %q is not a number: %w", obj.GetUID(), rv, err)
		}
	}
	holds := func() bool {
		got, ok := t.lookup(obj)
		return deleted && !ok || !deleted && ok && got >= want
	}
	for {
		if holds() {
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
		if holds() {
			return nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return fmt.Errorf("waiting for %s to reach the view: %w", obj.GetUID(), ctx.Err())
		}
	}
}

// parseRV reads a resourceVersion; one that is not a number counts as 0.
func parseRV(rv string) uint64 {
	n, err := strconv.ParseUint(rv, 10, 64)
	if err != nil {
		return 0
	}
	return n
}
