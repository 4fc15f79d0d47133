package restapi

import (
	"encoding/json"
	"hash/maphash"
	"net/http"
	"sync"
)

// stripedMutex serializes API writes that claim the same name (a domain and
// key, or a hostname) on this replica, so two concurrent creates cannot both
// pass the "already taken" check. Across replicas the claims rules (oldest
// wins, the other reports a conflict) still decide.
type stripedMutex struct {
	seed    maphash.Seed
	stripes [64]sync.Mutex
}

func newStripedMutex() *stripedMutex { return &stripedMutex{seed: maphash.MakeSeed()} }

// lock locks the stripe of name and returns its unlock.
func (m *stripedMutex) lock(name string) func() {
	mu := &m.stripes[maphash.String(m.seed, name)%uint64(len(m.stripes))]
	mu.Lock()
	return mu.Unlock
}

// lockedInput does what a create and an update share before they write:
// decode and validate the body with decode, lock the name the input claims
// (claimed) on this replica, and run check under the lock. Nothing is
// written; on success the caller must call unlock, on an error the lock is
// already released.
func lockedInput[I any](s *server, r *http.Request, decode func(map[string]json.RawMessage) (I, error), claimed func(I) string, check func(I) error) (in I, unlock func(), err error) {
	raw, err := decodeObject(r)
	if err != nil {
		return in, nil, err
	}
	if in, err = decode(raw); err != nil {
		return in, nil, err
	}
	unlock = s.locks.lock(claimed(in))
	if err := check(in); err != nil {
		unlock()
		return in, nil, err
	}
	return in, unlock, nil
}

// lockAll locks the stripes of every name, each stripe once and in stripe
// order (so two callers never wait on each other crosswise, and a stripe
// two names share is not locked twice), and returns their unlock.
func (m *stripedMutex) lockAll(names []string) func() {
	var want [len(m.stripes)]bool
	for _, name := range names {
		want[maphash.String(m.seed, name)%uint64(len(m.stripes))] = true
	}
	for i, w := range want {
		if w {
			m.stripes[i].Lock()
		}
	}
	return func() {
		for i, w := range want {
			if w {
				m.stripes[i].Unlock()
			}
		}
	}
}
