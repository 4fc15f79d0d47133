package redirect

import (
	"hash/maphash"
	"unsafe"
)

// keyInline is how many bytes of a key a keyTable slot holds in place:
// generated keys (7 characters) and most custom ones fit; a longer key's
// rest is compared with its Entry's record.
const keyInline = 19

// keyTable is a served host's keys and the Entries that serve them: an
// open-addressing table (linear probing, deletion by backward shift, at
// most 3/4 full) whose 32-byte slots hold the key's hash and its first
// keyInline bytes in place.
//
// It replaces a map[string]*Entry, which compares a key it finds with the
// bytes of the key string, another allocation: on the 10 000-link redirect
// benchmark that comparison (memeqbody, waiting for the key's line) was
// 2.2 % of the server's CPU and the map's probe 2.0 % (perf record). Here a
// lookup reads one slot, usually one cache line, and then the Entry it
// holds: 1.008x the requests/s of the map (make bench-redirect-ab, median
// of 5 rounds), for 9 bytes a link more (redirect-bench's index memory at
// 10 000 links, 771 -> 780).
//
// Readers (lookups) hold the Index's read lock, writers its write lock;
// grown builds a bigger table without either, from the one only writers
// change.
type keyTable struct {
	slots []keySlot
	n     int
	seed  maphash.Seed
}

// keySlot is one slot: empty when e is nil. h is the key's hash (its low
// bits are the slot it wants), k[:n] its first bytes, n up to keyInline
// (the key's length is e.rec.key's).
type keySlot struct {
	e *Entry
	h uint32
	n uint8
	k [keyInline]byte
}

func newKeyTable() keyTable { return keyTable{seed: maphash.MakeSeed()} }

func (t *keyTable) hash(key string) uint32 { return uint32(maphash.String(t.seed, key)) }

// len is the number of keys held.
func (t *keyTable) len() int { return t.n }

// get returns the Entry of key, nil when none.
func (t *keyTable) get(key []byte) *Entry {
	if t.n == 0 {
		return nil
	}
	k := unsafe.String(unsafe.SliceData(key), len(key)) // not kept
	return t.slots[t.find(k, t.hash(k))].e
}

// holds reports whether the slot, whose hash matched, holds key.
func (s *keySlot) holds(key string) bool {
	if len(key) <= keyInline {
		return int(s.n) == len(key) && string(s.k[:s.n]) == key
	}
	// A long key: its first bytes here, its length and the rest in the
	// record (a second cache miss, for long keys only).
	full := s.e.rec.key
	return int(s.n) == keyInline && len(full) == len(key) &&
		string(s.k[:]) == key[:keyInline] && full[keyInline:] == key[keyInline:]
}

// find is the index of the slot holding key, whose hash is h, or of the
// empty slot where it would go. The table has slots.
func (t *keyTable) find(key string, h uint32) uint32 {
	mask := uint32(len(t.slots) - 1)
	for i := h & mask; ; i = (i + 1) & mask {
		s := &t.slots[i]
		if s.e == nil || (s.h == h && s.holds(key)) {
			return i
		}
	}
}

// full reports whether one more key would make the table more than 3/4
// full: put grows it first; a writer may call grown beforehand, outside
// the readers' lock.
func (t *keyTable) full() bool { return (t.n+1)*4 > len(t.slots)*3 }

// put makes e serve its key (e.rec.key), in place of the Entry that did.
func (t *keyTable) put(e *Entry) {
	if t.full() {
		*t = t.grown()
	}
	key := e.rec.key
	h := t.hash(key)
	s := &t.slots[t.find(key, h)]
	if s.e == nil {
		t.n++
		s.h = h
		s.n = uint8(copy(s.k[:], key))
	}
	s.e = e
}

// grown is a copy of t with twice the slots (eight when empty); t is
// unchanged.
func (t *keyTable) grown() keyTable {
	g := keyTable{slots: make([]keySlot, max(8, 2*len(t.slots))), n: t.n, seed: t.seed}
	mask := uint32(len(g.slots) - 1)
	for i := range t.slots {
		s := &t.slots[i]
		if s.e == nil {
			continue
		}
		j := s.h & mask
		for g.slots[j].e != nil {
			j = (j + 1) & mask
		}
		g.slots[j] = *s
	}
	return g
}

// delete removes key, if held. The slots after it that would rather be
// where it was move back (backward shift), so no probe ever stops at a
// hole its key skipped.
func (t *keyTable) delete(key string) {
	if t.n == 0 {
		return
	}
	hole := t.find(key, t.hash(key))
	if t.slots[hole].e == nil {
		return
	}
	t.n--
	mask := uint32(len(t.slots) - 1)
	for j := (hole + 1) & mask; t.slots[j].e != nil; j = (j + 1) & mask {
		// The slot at j wants want; it may move to the hole unless want lies
		// cyclically in (hole, j].
		want := t.slots[j].h & mask
		if (j-want)&mask >= (j-hole)&mask {
			t.slots[hole] = t.slots[j]
			hole = j
		}
	}
	t.slots[hole] = keySlot{}
}
