package pagination

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"

	kurzv1alpha1 "github.com/kurz-dev/kurz/api/v1alpha1"
)

const benchItems = 100_000

// benchIndex fills an index with n links in random order, as an informer's
// initial list delivers them (sorted by name, not by time).
func benchIndex(b *testing.B, n int) (*Index[*kurzv1alpha1.Link], []*kurzv1alpha1.Link) {
	b.Helper()
	rng := rand.New(rand.NewPCG(3, 4))
	ix := NewIndex(createdAt)
	links := make([]*kurzv1alpha1.Link, n)
	for i := range links {
		links[i] = link("ns", fmt.Sprintf("%08d-uid", i), rng.IntN(n*10), i+1)
	}
	rng.Shuffle(len(links), func(i, j int) { links[i], links[j] = links[j], links[i] })
	for _, l := range links {
		ix.Upsert(l)
	}
	return ix, links
}

func BenchmarkPage(b *testing.B) {
	ix, _ := benchIndex(b, benchItems)
	lastPage := (benchItems + PerPage - 1) / PerPage
	for _, bc := range []struct {
		name string
		page int
	}{{"first", 1}, {"middle", lastPage / 2}, {"last", lastPage}} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				items, total := ix.Page("ns", Offset(bc.page), PerPage)
				if total != benchItems || len(items) == 0 {
					b.Fatalf("got %d items of %d", len(items), total)
				}
			}
		})
	}
}

// BenchmarkPageEnvelope is a whole list answer minus JSON: page and envelope.
func BenchmarkPageEnvelope(b *testing.B) {
	ix, _ := benchIndex(b, benchItems)
	b.ReportAllocs()
	for b.Loop() {
		items, total := ix.Page("ns", Offset(2000), PerPage)
		_ = Build("http://127.0.0.1:8080/api/v1/links", 2000, total, items)
	}
}

// BenchmarkUpsert moves existing items to new places (the costly update:
// a remove and an insert) in an index of 100 000.
func BenchmarkUpsert(b *testing.B) {
	ix, links := benchIndex(b, benchItems)
	rng := rand.New(rand.NewPCG(5, 6))
	moved := make([]*kurzv1alpha1.Link, len(links))
	for i, l := range links {
		moved[i] = link("ns", string(l.UID), rng.IntN(benchItems*10), benchItems+i+1)
	}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		ix.Upsert(moved[i%len(moved)])
		i++
	}
}

// BenchmarkLoad is an informer's initial sync of 100 000 objects arriving
// in random order (random) and oldest first (inOrder: Links loaded in
// order, named in order, and the informer lists them by name).
// liveB/item is the index's own memory per object (the objects themselves
// belong to the informer).
func BenchmarkLoad(b *testing.B) {
	_, links := benchIndex(b, benchItems)
	b.Run("random", func(b *testing.B) { benchLoad(b, links) })
	inOrder := slices.Clone(links)
	slices.SortFunc(inOrder, func(x, y *kurzv1alpha1.Link) int { return createdAt(x).Compare(createdAt(y)) })
	b.Run("inOrder", func(b *testing.B) { benchLoad(b, inOrder) })
}

func benchLoad(b *testing.B, links []*kurzv1alpha1.Link) {
	load := func() *Index[*kurzv1alpha1.Link] {
		ix := NewIndex(createdAt)
		for _, l := range links {
			ix.Upsert(l)
		}
		return ix
	}
	for b.Loop() {
		load()
	}

	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	ix := load()
	runtime.GC()
	runtime.ReadMemStats(&after)
	b.ReportMetric((float64(after.HeapAlloc)-float64(before.HeapAlloc))/benchItems, "liveB/item")
	runtime.KeepAlive(ix)
}
