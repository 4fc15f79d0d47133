package linkquery

import (
	"math/rand/v2"
	"slices"
	"strings"
)

// cand is a matching record as the sort sees it: v and id are the sort
// value and the uid prefix, transformed so that ascending numbers are the
// wanted order; slot finds the record when they tie.
type cand struct {
	v, id   uint64
	slot    int32
	longKey bool
}

const signBit = 1 << 63

// candOf is r's candidate for a sort by field, ascending or not.
func candOf(r *record, slot int32, by Field, asc bool) cand {
	var v uint64
	switch by {
	case ByCreated:
		v = uint64(r.created) ^ signBit
	case ByUpdated:
		v = uint64(r.updated) ^ signBit
	case ByKey:
		v = r.keyPfx
	case ByClicks:
		v = uint64(r.clicks) ^ signBit
	case ByLastClick:
		v = uint64(r.lastClick)
	}
	// Only a sort by key reads the keys of equal prefixes.
	c := cand{v: v, id: r.idPfx, slot: slot, longKey: by == ByKey && r.flags&longKey != 0}
	if !asc {
		c.v, c.id = ^c.v, ^c.id
	}
	return c
}

// order compares candidates, reading the records only for ties.
type order struct {
	recs  []record
	byKey bool
	asc   bool
}

// compare is negative when a comes before b, positive when after, 0 for
// the same link. Equal key prefixes of keys that may be longer need the
// keys themselves before the ids; equal id prefixes need the uids.
func (o *order) compare(a, b *cand) int {
	if a.v != b.v {
		if a.v < b.v {
			return -1
		}
		return 1
	}
	if o.byKey && (a.longKey || b.longKey) {
		if c := strings.Compare(o.recs[a.slot].key, o.recs[b.slot].key); c != 0 {
			return o.direct(c)
		}
	}
	if a.id != b.id {
		if a.id < b.id {
			return -1
		}
		return 1
	}
	return o.direct(strings.Compare(string(o.recs[a.slot].obj.UID), string(o.recs[b.slot].obj.UID)))
}

// direct turns a comparison of strings into the sort's direction.
func (o *order) direct(c int) int {
	if o.asc {
		return c
	}
	return -c
}

// less reports whether a comes before b. Distinct sort values, the common
// case, are compared inline; ties go to compare.
func (o *order) less(a, b *cand) bool {
	if a.v != b.v {
		return a.v < b.v
	}
	return o.compare(a, b) < 0
}

func (o *order) sort(cs []cand) {
	slices.SortFunc(cs, func(a, b cand) int { return o.compare(&a, &b) })
}

// page orders cs just enough that cs[lo:hi] holds, sorted, what a full sort
// would put there: two selections, then a sort of the page alone.
func (o *order) page(cs []cand, lo, hi int) {
	if lo > 0 {
		o.selectK(cs, lo)
	}
	if hi < len(cs) {
		o.selectK(cs[lo:], hi-lo)
	}
	o.sort(cs[lo:hi])
}

// selectK moves the k smallest of cs, in any order, before the others
// (quickselect with random pivots, so no order of the input is a bad case).
func (o *order) selectK(cs []cand, k int) {
	lo, hi := 0, len(cs)
	for hi-lo > 16 {
		n := hi - lo
		p := o.median(cs, lo+rand.IntN(n), lo+rand.IntN(n), lo+rand.IntN(n))
		cs[p], cs[hi-1] = cs[hi-1], cs[p]
		pivot := cs[hi-1]
		m := lo
		for i := lo; i < hi-1; i++ {
			if o.less(&cs[i], &pivot) {
				cs[i], cs[m] = cs[m], cs[i]
				m++
			}
		}
		cs[m], cs[hi-1] = cs[hi-1], cs[m]
		// Now cs[lo:m] < cs[m] < cs[m+1:hi].
		switch {
		case k < m:
			hi = m
		case k > m+1:
			lo = m + 1
		default:
			return
		}
	}
	o.sort(cs[lo:hi])
}

// median returns whichever of i, j, k holds the middle candidate.
func (o *order) median(cs []cand, i, j, k int) int {
	if o.less(&cs[j], &cs[i]) {
		i, j = j, i
	}
	if o.less(&cs[k], &cs[j]) {
		j = k
		if o.less(&cs[j], &cs[i]) {
			j = i
		}
	}
	return j
}
