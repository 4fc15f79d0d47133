package redirect

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

func entryFor(key string) *Entry { return &Entry{rec: &linkRec{key: key}} }

// tableKeys are keys of every length class: short, exactly keyInline, one
// longer, and the longest, many sharing their first keyInline bytes so
// that only the rest held in the record tells them apart.
func tableKeys(n int) []string {
	long := strings.Repeat("p", keyInline)
	keys := make([]string, 0, n)
	for i := range n {
		switch i % 4 {
		case 0:
			keys = append(keys, fmt.Sprint("k", i))
		case 1:
			keys = append(keys, fmt.Sprintf("%0*d", keyInline, i))
		case 2:
			keys = append(keys, fmt.Sprint(long, i))
		default:
			keys = append(keys, fmt.Sprintf("%s%0*d", long, maxKeyLen-keyInline, i))
		}
	}
	return keys
}

// TestKeyTableAgreesWithAMap puts and deletes keys at random, in a table
// that grows from empty and is emptied again, and checks after every step
// that it answers every key as a map does: the backward shift of a
// deletion must leave every other key findable.
func TestKeyTableAgreesWithAMap(t *testing.T) {
	keys := tableKeys(600)
	rng := rand.New(rand.NewPCG(1, 2))
	tab := newKeyTable()
	want := map[string]*Entry{}
	check := func(step int) {
		t.Helper()
		if tab.len() != len(want) {
			t.Fatalf("step %d: len %d, want %d", step, tab.len(), len(want))
		}
		for _, k := range keys {
			if got := tab.get([]byte(k)); got != want[k] {
				t.Fatalf("step %d: get(%q) = %p, want %p", step, k, got, want[k])
			}
		}
	}
	for step := range 4000 {
		k := keys[rng.IntN(len(keys))]
		// Mostly puts while filling, mostly deletes while emptying.
		putting := rng.IntN(4) > 0
		if step >= 2000 {
			putting = !putting
		}
		if putting {
			e := entryFor(k) // a new Entry replaces the old one
			tab.put(e)
			want[k] = e
		} else {
			tab.delete(k)
			delete(want, k)
		}
		if step%50 == 0 {
			check(step)
		}
	}
	check(4000)
	for k := range want {
		tab.delete(k)
	}
	if tab.len() != 0 {
		t.Fatalf("len %d after every key was deleted", tab.len())
	}
}

// TestKeyTableMisses: keys that share a held key's first bytes or its
// length, the empty key and one longer than any key are not found.
func TestKeyTableMisses(t *testing.T) {
	tab := newKeyTable()
	if tab.get([]byte("k1")) != nil {
		t.Fatal("an empty table found a key")
	}
	long := strings.Repeat("a", keyInline) + "tail"
	for _, k := range []string{"k1", long} {
		tab.put(entryFor(k))
	}
	for _, k := range []string{"", "k", "k10", "k2", strings.Repeat("a", keyInline), long + "x", long[:len(long)-1] + "X",
		strings.Repeat("a", maxKeyLen+1)} {
		if e := tab.get([]byte(k)); e != nil {
			t.Errorf("get(%q) found the Entry of %q", k, e.rec.key)
		}
	}
	if e := tab.get([]byte(long)); e == nil || e.rec.key != long {
		t.Errorf("get(%q) = %v", long, e)
	}
}

// TestKeyTableGrownLeavesTheOriginal: a writer builds the grown table
// while readers still use the old one, which must stay whole.
func TestKeyTableGrownLeavesTheOriginal(t *testing.T) {
	tab := newKeyTable()
	keys := tableKeys(6) // 6 of 8 slots: full
	for _, k := range keys {
		tab.put(entryFor(k))
	}
	if !tab.full() {
		t.Fatalf("%d keys in %d slots: not full", tab.len(), len(tab.slots))
	}
	g := tab.grown()
	if len(g.slots) != 2*len(tab.slots) || g.len() != tab.len() {
		t.Fatalf("grown: %d slots, %d keys; from %d, %d", len(g.slots), g.len(), len(tab.slots), tab.len())
	}
	for _, k := range keys {
		if tab.get([]byte(k)) == nil || g.get([]byte(k)) != tab.get([]byte(k)) {
			t.Errorf("%q: original %p, grown %p", k, tab.get([]byte(k)), g.get([]byte(k)))
		}
	}
}

// BenchmarkKeyTableGet and BenchmarkKeyMapGet compare a lookup of a
// random one of 10 000 keys (as the redirect benchmark sends them) in the
// table and in the map it replaced.
func BenchmarkKeyTableGet(b *testing.B) {
	keys := benchKeys(10000)
	tab := newKeyTable()
	for _, k := range keys {
		tab.put(entryFor(string(k)))
	}
	i := 0
	for b.Loop() {
		if tab.get(keys[i%len(keys)]) == nil {
			b.Fatal("miss")
		}
		i += 7919
	}
}

func BenchmarkKeyMapGet(b *testing.B) {
	keys := benchKeys(10000)
	m := map[string]*Entry{}
	for _, k := range keys {
		m[string(k)] = entryFor(string(k))
	}
	i := 0
	for b.Loop() {
		if m[string(keys[i%len(keys)])] == nil {
			b.Fatal("miss")
		}
		i += 7919
	}
}

func benchKeys(n int) [][]byte {
	keys := make([][]byte, n)
	for i := range keys {
		keys[i] = fmt.Append(nil, "k", i)
	}
	return keys
}
