package linkquery

import (
	"hash/maphash"

	"k8s.io/apimachinery/pkg/types"
)

// slots finds a uid's record. A map keyed by the uid string costs a
// 16-byte key per link; keyed by a 64-bit hash of it, 8 bytes, about 10
// bytes per link less in all. Two uids with one hash (never seen in
// practice) are told apart by the record's own uid: the second goes to
// overflow, keyed by the uid itself.
type slots struct {
	hash     func(types.UID) uint64
	byHash   map[uint64]int32
	overflow map[types.UID]int32
}

func newSlots(hash func(types.UID) uint64) slots {
	return slots{hash: hash, byHash: map[uint64]int32{}}
}

// seededHash is a maphash of the uid with a seed of its own per index, so
// no one can choose uids that collide.
func seededHash() func(types.UID) uint64 {
	seed := maphash.MakeSeed()
	return func(uid types.UID) uint64 { return maphash.String(seed, string(uid)) }
}

// get returns the slot of uid in recs.
func (s *slots) get(recs []record, uid types.UID) (int32, bool) {
	if i, ok := s.byHash[s.hash(uid)]; ok && recs[i].obj.UID == uid {
		return i, true
	}
	i, ok := s.overflow[uid]
	return i, ok
}

// add records the slot of a uid that has none.
func (s *slots) add(uid types.UID, slot int32) {
	h := s.hash(uid)
	if _, taken := s.byHash[h]; !taken {
		s.byHash[h] = slot
		return
	}
	if s.overflow == nil {
		s.overflow = map[types.UID]int32{}
	}
	s.overflow[uid] = slot
}

// move changes the slot of uid from old to slot.
func (s *slots) move(uid types.UID, old, slot int32) {
	h := s.hash(uid)
	if i, ok := s.byHash[h]; ok && i == old {
		s.byHash[h] = slot
		return
	}
	s.overflow[uid] = slot
}

// remove forgets uid, whose slot is slot.
func (s *slots) remove(uid types.UID, slot int32) {
	h := s.hash(uid)
	if i, ok := s.byHash[h]; ok && i == slot {
		delete(s.byHash, h)
		return
	}
	delete(s.overflow, uid)
}
