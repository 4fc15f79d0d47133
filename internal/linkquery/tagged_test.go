package linkquery

import (
	"testing"
)

// TestQueryTaggedFromMembers is TestQueryAgainstBruteForce with every tag
// filter answered from the tag sets' members, whatever its share of the
// links, so that the members stay right through upserts that change a
// link's tags, deletes that move another record into the freed slot, and
// sets that empty and come back.
func TestQueryTaggedFromMembers(t *testing.T) {
	defer func(n int) { tagIndexShare = n }(tagIndexShare)
	tagIndexShare = 0
	ix := New(createdAt, updatedAt)
	checkAgainstBruteForce(t, ix)
	checkMembers(t, ix)
}

// checkMembers checks that each tag set's members are the slots of the
// records with that set, each once, at the position pos says.
func checkMembers(t *testing.T, ix *Index) {
	t.Helper()
	for ns, sp := range ix.spaces {
		if len(sp.pos) != len(sp.recs) {
			t.Fatalf("%s: %d positions for %d records", ns, len(sp.pos), len(sp.recs))
		}
		members := 0
		for _, s := range sp.sets {
			for i, slot := range s.members {
				if sp.recs[slot].tags != s || sp.pos[slot] != int32(i) {
					t.Fatalf("%s: member %d of set %v is slot %d, whose set is %v at %d", ns, i, s.ids, slot, sp.recs[slot].tags, sp.pos[slot])
				}
			}
			members += len(s.members)
		}
		tagged := 0
		for i := range sp.recs {
			if sp.recs[i].tags != nil {
				tagged++
			}
		}
		if members != tagged {
			t.Fatalf("%s: %d members for %d tagged records", ns, members, tagged)
		}
	}
}
