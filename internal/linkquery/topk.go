package linkquery

// maxTopK is the most candidates a scan keeps for a page near either end
// of a list: the first and the last 10 pages of 25 are chosen during the
// scan, with no buffer of every match (the 2.4 MB of 100 000 candidates,
// allocated and zeroed when the pool had none). Other pages take a buffer
// and a quickselect. A larger k costs every last page more cuts (at
// 1 024, exclude_tag's last page took 1.7 times the CPU of 256 in one run
// on a loaded machine).
// (A variable for the tests.)
var maxTopK = 256

// topK keeps the k first, in the order o, of the candidates it is given.
// A candidate that does not come before the k-th of those kept so far is
// dropped after one comparison; the others go to a buffer of about 2k,
// cut back to its k first by a quickselect when full. That is O(n) for
// any order of the records (a heap would be O(n log k) for records in the
// sort's reverse order, as an informer's list in creation order is for
// newest first) and one comparison a candidate once the threshold settles.
type topK struct {
	o   *order
	k   int
	cs  []cand
	thr cand // the k-th kept, once full
	// full: cs has held k candidates, and thr is the last of them.
	full bool
	buf  *[]cand // what cs is a slice of, for the pool
}

// add offers c.
func (t *topK) add(c cand) {
	if t.full && !t.o.less(&c, &t.thr) {
		return
	}
	t.keep(c)
}

// keep adds c, which comes before the threshold (or there is none yet).
func (t *topK) keep(c cand) {
	t.cs = append(t.cs, c)
	if len(t.cs) == cap(t.cs) {
		t.cut()
	}
}

// behind reports whether c, offered to a full topK, comes after its
// threshold: what a scan drops. The sort values and id prefixes decide it
// inline, ties of the sort value too (a sort by clicks or last_click of
// links never clicked is all ties); less decides the rest.
func (t *topK) behind(c *cand) bool {
	switch {
	case c.v != t.thr.v:
		return c.v > t.thr.v
	case c.id != t.thr.id && !c.longKey && !t.thr.longKey:
		return c.id > t.thr.id
	}
	return !t.o.less(c, &t.thr)
}

// cut keeps the k first of cs and makes the last of them the threshold.
func (t *topK) cut() {
	if len(t.cs) <= t.k {
		return
	}
	t.o.selectK(t.cs, t.k)
	t.cs = t.cs[:t.k]
	last := 0
	for i := 1; i < len(t.cs); i++ {
		if t.o.less(&t.cs[last], &t.cs[i]) {
			last = i
		}
	}
	t.thr, t.full = t.cs[last], true
}

// topBufLen is the capacity of a topK's buffer for k: twice k, and at
// least 64 so that a small k is not cut every few candidates.
func topBufLen(k int) int { return max(2*k, 64) }
