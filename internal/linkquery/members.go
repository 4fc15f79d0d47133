package linkquery

// Each tag set lists the slots of its records (tagSet.members), and
// space.pos holds, by slot, the record's position in that list, so that a
// record joins or leaves its set in O(1). A query with a tag filter reads
// the members of the sets that pass it instead of scanning every record
// (tagged.go): the 1 000 links of a tag among 100 000 cost 1 000 record
// reads, not 100 000. 4 bytes a link in pos and 4 to 8 a tagged link in
// members (the slices' spare capacity included).

// join adds the record at slot to the members of its tag set.
func (sp *space) join(slot int32) {
	if s := sp.recs[slot].tags; s != nil {
		sp.pos[slot] = int32(len(s.members))
		s.members = append(s.members, slot)
	}
}

// leave removes the record at slot from the members of its tag set: the
// last member takes its place.
func (sp *space) leave(slot int32) {
	s := sp.recs[slot].tags
	if s == nil {
		return
	}
	i, last := sp.pos[slot], s.members[len(s.members)-1]
	s.members[i], sp.pos[last] = last, i
	s.members = s.members[:len(s.members)-1]
	if len(s.members) == 0 {
		s.members = nil
	}
}

// moved tells the record's tag set that the record at from is now at to
// (recs[to] already holds it).
func (sp *space) moved(from, to int32) {
	if s := sp.recs[to].tags; s != nil {
		i := sp.pos[from]
		s.members[i], sp.pos[to] = to, i
	}
}
