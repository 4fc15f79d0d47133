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

// Tracker tells writers when a view holds their writes.
type Tracker struct {
	// lookup returns the resourceVersion the view holds for uid.
	lookup func(uid types.UID) (rv string, ok bool)

	mu sync.Mutex
	// changed is closed and cleared on every change of the view; WaitFor
	// creates it lazily, so an informer sync with no one waiting allocates
	// nothing.
	changed chan struct{}
}

// Track returns a Tracker of v. Call it before v is fed: it registers
// itself with v.OnChange.
func Track[T client.Object](v View[T]) *Tracker {
	t := &Tracker{lookup: func(uid types.UID) (string, bool) {
		obj, ok := v.Get(uid)
		if !ok {
			return "", false
		}
		return obj.GetResourceVersion(), true
	}}
	v.OnChange(t.changedNow)
	return t
}

// changedNow wakes every waiter to look again.
func (t *Tracker) changedNow() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.changed != nil {
		close(t.changed)
		t.changed = nil
	}
}

// WaitFor blocks until the view holds uid at resourceVersion rv or a later
// one or, when deleted is true, until it holds no uid (rv is then unused).
// resourceVersions are etcd revisions, compared as numbers.
func (t *Tracker) WaitFor(ctx context.Context, uid types.UID, rv string, deleted bool) error {
	var want uint64
	if !deleted {
		var err error
		if want, err = strconv.ParseUint(rv, 10, 64); err != nil {
			return fmt.Errorf("waiting for %s: resourceVersion %q is not a number: %w", uid, rv, err)
		}
	}
	holds := func() bool {
		got, ok := t.lookup(uid)
		return deleted && !ok || !deleted && ok && parseRV(got) >= want
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
			return fmt.Errorf("waiting for %s to reach the list index: %w", uid, ctx.Err())
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
