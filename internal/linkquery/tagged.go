package linkquery

// tagIndexShare decides when a tag filter reads its sets' members instead
// of scanning: when at most one record in tagIndexShare can pass it (by
// the tags' link counts), and the namespace has no more tag sets than
// that either (each set is checked once). Beyond it a sequential scan of
// every record costs about as much as reading that many records in the
// scattered order of their slots. (A variable for the tests: 0 reads the
// members of any tag filter.)
var tagIndexShare = 8

// tagged returns, when m's tag filter is narrow enough for the tag sets'
// members, the sets that pass it (whose members are every record that can
// pass m); ok is false when a scan is cheaper.
func (ix *Index) tagged(sp *space, m *matcher) (sets []*tagSet, ok bool) {
	if len(m.anyTags) == 0 && len(m.allTags) == 0 {
		return nil, false
	}
	// At most this many records carry the tags: the sum of the counts of
	// any of them, the smallest count of all of them.
	bound := 0
	for _, id := range m.anyTags {
		bound += int(sp.tags.counts[id])
	}
	for i, id := range m.allTags {
		if n := int(sp.tags.counts[id]); i == 0 || n < bound {
			bound = n
		}
	}
	if n := len(sp.recs); bound*tagIndexShare > n || len(sp.sets)*tagIndexShare > n {
		return nil, false
	}
	for _, s := range sp.sets {
		if m.tagsMatch(s) {
			sets = append(sets, s)
		}
	}
	return sets, true
}

// pageOf is page for the members of sets alone: the candidates of those
// m matches in a buffer and a quickselect of the page. The order of the
// sets and of their members does not matter: the order is total.
func (ix *Index) pageOf(recs []record, sets []*tagSet, m *matcher, s Sort, offset, limit int) (page []int32, total int) {
	asc := s.ascending()
	n := 0
	for _, set := range sets {
		n += len(set.members)
	}
	buf := ix.scratch(n)
	defer ix.cands.Put(buf)
	cs := (*buf)[:0]
	for _, set := range sets {
		for _, slot := range set.members {
			if r := &recs[slot]; m.match(r) {
				cs = append(cs, candOf(r, slot, s.By, asc))
			}
		}
	}
	*buf = cs
	total = len(cs)
	if limit <= 0 || offset >= total {
		return nil, total
	}
	end := min(offset+limit, total)
	o := order{recs: recs, byKey: s.By == ByKey, asc: asc}
	o.page(cs, offset, end)
	return slotsOf(cs[offset:end]), total
}
