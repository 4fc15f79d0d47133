package linkquery

import (
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"

	kurzv1alpha1 "github.com/kurz-dev/kurz/api/v1alpha1"
)

// Index holds the records of every Link, per namespace. It keeps the
// informer's pointers, never copies, and is safe for concurrent use:
// queries of a namespace share its lock, and an event waits for them.
type Index struct {
	createdAt, updatedAt func(*kurzv1alpha1.Link) time.Time
	// hash is what slots key uids by (tests choose one that collides).
	hash func(types.UID) uint64

	// wmu serializes writers (one informer handler feeds the index, so it
	// costs nothing), which lets a namespace emptied by a delete leave the
	// map without racing an insert.
	wmu    sync.Mutex
	mu     sync.RWMutex // guards spaces
	spaces map[string]*space

	cands sync.Pool // *[]cand, the scratch of a page far from both ends
	tops  sync.Pool // *[]cand of topBufLen(maxTopK), a topK's buffer
}

// space is one namespace's records.
type space struct {
	mu    sync.RWMutex
	recs  []record
	slots slots // uid -> index in recs
	// pos is, by slot, the record's position in its tag set's members
	// (members.go).
	pos []int32
	// domains gives hostnames ids (record.domain); tags gives tags ids,
	// counting the links of each (GET /api/v1/tags), and sets holds the
	// shared tag sets by key.
	domains dict
	tags    dict
	sets    map[string]*tagSet
}

// New returns an empty index. createdAt and updatedAt are the times the
// API answers as created_at and updated_at (created_at must be the list
// index's order, so that the default sort answers the same either way).
func New(createdAt, updatedAt func(*kurzv1alpha1.Link) time.Time) *Index {
	return &Index{createdAt: createdAt, updatedAt: updatedAt, hash: seededHash(), spaces: map[string]*space{}}
}

// Upsert adds l, or replaces the record of its uid.
func (ix *Index) Upsert(l *kurzv1alpha1.Link) {
	if l.UID == "" {
		return
	}
	ix.wmu.Lock()
	defer ix.wmu.Unlock()
	ix.mu.RLock()
	sp := ix.spaces[l.Namespace]
	ix.mu.RUnlock()
	if sp == nil {
		sp = &space{slots: newSlots(ix.hash), domains: newDict(), tags: newDict(), sets: map[string]*tagSet{}}
		ix.mu.Lock()
		ix.spaces[l.Namespace] = sp
		ix.mu.Unlock()
	}
	sp.mu.Lock()
	defer sp.mu.Unlock()
	// Acquire before release: a link whose domain and tags did not change
	// keeps their ids.
	r := ix.recordOf(sp, l)
	if slot, ok := sp.slots.get(sp.recs, l.UID); ok {
		sp.leave(slot)
		sp.release(&sp.recs[slot])
		sp.recs[slot] = r
		sp.join(slot)
		return
	}
	sp.recs = append(sp.recs, r)
	sp.pos = append(sp.pos, 0)
	slot := int32(len(sp.recs) - 1)
	sp.slots.add(l.UID, slot)
	sp.join(slot)
}

// Delete removes the record of l's uid (the rest of l may be stale).
func (ix *Index) Delete(l *kurzv1alpha1.Link) {
	ix.wmu.Lock()
	defer ix.wmu.Unlock()
	ix.mu.RLock()
	sp := ix.spaces[l.Namespace]
	ix.mu.RUnlock()
	if sp == nil {
		return
	}
	sp.mu.Lock()
	slot, ok := sp.slots.get(sp.recs, l.UID)
	if ok {
		sp.leave(slot)
		sp.release(&sp.recs[slot])
		sp.slots.remove(l.UID, slot)
		last := int32(len(sp.recs) - 1)
		if slot != last {
			sp.recs[slot] = sp.recs[last]
			sp.moved(last, slot)
			sp.slots.move(sp.recs[slot].obj.UID, last, slot)
		}
		sp.recs[last] = record{}
		sp.recs, sp.pos = sp.recs[:last], sp.pos[:last]
		if cap(sp.recs) > 64 && len(sp.recs) < cap(sp.recs)/4 {
			sp.recs = append(make([]record, 0, 2*len(sp.recs)), sp.recs...)
			sp.pos = append(make([]int32, 0, 2*len(sp.pos)), sp.pos...)
		}
	}
	empty := len(sp.recs) == 0
	sp.mu.Unlock()
	if empty {
		// A query holding sp reads it empty, as it now is; the next insert
		// makes a new space.
		ix.mu.Lock()
		delete(ix.spaces, l.Namespace)
		ix.mu.Unlock()
	}
}

// space returns the records of namespace, nil when it has none.
func (ix *Index) space(namespace string) *space {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	return ix.spaces[namespace]
}

// recordOf decodes l's record, acquiring its domain and tag ids in sp.
func (ix *Index) recordOf(sp *space, l *kurzv1alpha1.Link) record {
	r := record{
		obj:     l,
		key:     l.Spec.Key,
		url:     string(l.Spec.URL),
		created: ix.createdAt(l).UnixMicro(),
		updated: ix.updatedAt(l).UnixMicro(),
		clicks:  l.Status.Clicks,
		keyPfx:  prefix8(l.Spec.Key),
		idPfx:   prefix8(string(l.UID)),
		tags:    sp.acquireSet(l.Spec.Tags),
		state:   StateOf(l),
	}
	if id := sp.domains.acquire(string(l.Spec.Domain)); id <= maxDomainID {
		r.domain = uint16(id)
	}
	if t := l.Status.LastClickTime; t != nil && !t.IsZero() {
		r.lastClick = unixSeconds32(t.Time)
	}
	if l.Spec.PasswordHash != nil {
		r.flags |= hasPassword
	}
	if len(l.Spec.Key) > 8 {
		r.flags |= longKey
	}
	return r
}

// maxDomainID is the largest domain id a record holds.
const maxDomainID = 1<<16 - 1

// release gives back what a record acquired.
func (sp *space) release(r *record) {
	sp.releaseSet(r.tags)
	if r.domain != 0 {
		sp.domains.release(uint32(r.domain))
	} else if id, ok := sp.domains.lookup(string(r.obj.Spec.Domain)); ok {
		sp.domains.release(id)
	}
}
