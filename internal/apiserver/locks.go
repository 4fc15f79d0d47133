package apiserver

import (
	"hash/maphash"
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
