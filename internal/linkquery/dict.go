package linkquery

import (
	"encoding/binary"
	"slices"
)

// dict gives the distinct strings of a namespace (its hostnames, its tags)
// small ids and counts how many links use each; an id whose count drops to
// zero is forgotten and reused.
type dict struct {
	ids    map[string]uint32
	names  []string // by id; id 0 is never given
	counts []int32  // by id
	free   []uint32
}

func newDict() dict {
	return dict{ids: map[string]uint32{}, names: []string{""}, counts: []int32{0}}
}

// acquire returns the id of name, counting one more user.
func (d *dict) acquire(name string) uint32 {
	id, ok := d.ids[name]
	if !ok {
		if n := len(d.free); n > 0 {
			id, d.free = d.free[n-1], d.free[:n-1]
			d.names[id] = name
		} else {
			id = uint32(len(d.names))
			d.names = append(d.names, name)
			d.counts = append(d.counts, 0)
		}
		d.ids[name] = id
	}
	d.counts[id]++
	return id
}

// release counts one user of id less.
func (d *dict) release(id uint32) {
	if d.counts[id]--; d.counts[id] == 0 {
		delete(d.ids, d.names[id])
		d.names[id] = ""
		d.free = append(d.free, id)
	}
}

// lookup returns the id of name, if any link uses it.
func (d *dict) lookup(name string) (uint32, bool) {
	id, ok := d.ids[name]
	return id, ok
}

// tagSet is the sorted tag ids of one or more links with the same tags.
type tagSet struct {
	ids  []uint32
	key  string // ids as bytes: the set's key in space.sets
	refs int32
	// members are the slots of the records with this set (members.go).
	members []int32
}

// has reports whether the set holds id.
func (s *tagSet) has(id uint32) bool {
	if s == nil {
		return false
	}
	if len(s.ids) > 8 {
		_, ok := slices.BinarySearch(s.ids, id)
		return ok
	}
	// A link has a few tags: a loop beats the call of a binary search in
	// a scan of 100 000 links.
	for _, x := range s.ids {
		if x >= id {
			return x == id
		}
	}
	return false
}

// acquireSet returns the shared set of tags (nil for none), counting one
// more link for the set and for each tag.
func (sp *space) acquireSet(tags []string) *tagSet {
	if len(tags) == 0 {
		return nil
	}
	var buf [32]uint32
	ids := buf[:0]
	for _, t := range tags {
		ids = append(ids, sp.tags.acquire(t))
	}
	slices.Sort(ids)
	// Tags are a set (the CRD says so); a repeat counts once.
	for i := len(ids) - 1; i > 0; i-- {
		if ids[i] == ids[i-1] {
			sp.tags.release(ids[i])
		}
	}
	ids = slices.Compact(ids)
	var kb [4 * 64]byte
	key := kb[:0]
	for _, id := range ids {
		key = binary.BigEndian.AppendUint32(key, id)
	}
	s, ok := sp.sets[string(key)]
	if !ok {
		s = &tagSet{ids: slices.Clone(ids), key: string(key)}
		sp.sets[s.key] = s
	}
	s.refs++
	return s
}

// releaseSet counts one link less for s and its tags.
func (sp *space) releaseSet(s *tagSet) {
	if s == nil {
		return
	}
	for _, id := range s.ids {
		sp.tags.release(id)
	}
	if s.refs--; s.refs == 0 {
		delete(sp.sets, s.key)
	}
}
