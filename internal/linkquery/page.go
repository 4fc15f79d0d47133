package linkquery

import (
	"runtime"
	"sync"
)

// page returns the slots of the records m matches at positions [offset,
// offset+limit) of s's order, and how many match.
//
// A page that ends within maxTopK of the start is chosen during the scan
// (topK). One that may start within maxTopK of the end is chosen the same
// way in the reverse order: a filtered scan cannot know where the end is
// until it is over, so it keeps the last maxTopK and, when the page is
// further from the end, scans again into a buffer of every match and
// quickselects (middle pages of filtered lists pay two scans, first and
// last pages none of the buffer). Without filters every record matches,
// so a middle page goes to the buffer at once.
func (ix *Index) page(recs []record, m *matcher, s Sort, offset, limit int) (slots []int32, total int) {
	if limit <= 0 || offset >= len(recs) {
		return nil, countMatches(recs, m)
	}
	asc := s.ascending()
	end := offset + min(limit, len(recs)-offset)
	o := order{recs: recs, byKey: s.By == ByKey, asc: asc}
	switch {
	case end <= maxTopK:
		t, total := ix.scanTop(recs, m, s.By, &o, end)
		defer ix.tops.Put(t.buf)
		if offset >= total {
			return nil, total
		}
		end = min(end, total)
		o.page(t.cs, offset, end)
		return slotsOf(t.cs[offset:end]), total
	case !m.all || len(recs)-offset <= maxTopK:
		rev := order{recs: recs, byKey: o.byKey, asc: !asc}
		k := min(maxTopK, len(recs))
		t, total := ix.scanTop(recs, m, s.By, &rev, k)
		defer ix.tops.Put(t.buf)
		if offset >= total {
			return nil, total
		}
		if total-offset <= k {
			// Positions [offset, end) are [total-end, total-offset) of
			// the reverse order, read backwards.
			lo, hi := total-min(end, total), total-offset
			rev.page(t.cs, lo, hi)
			slots = make([]int32, 0, hi-lo)
			for i := hi - 1; i >= lo; i-- {
				slots = append(slots, t.cs[i].slot)
			}
			return slots, total
		}
	}
	buf := ix.scratch(len(recs))
	defer ix.cands.Put(buf)
	cs := scan(recs, m, s.By, asc, (*buf)[:len(recs)])
	*buf = cs
	total = len(cs) // more than offset: every record, or more than the end's k
	end = min(end, total)
	o.page(cs, offset, end)
	return slotsOf(cs[offset:end]), total
}

func slotsOf(cs []cand) []int32 {
	slots := make([]int32, len(cs))
	for i := range cs {
		slots[i] = cs[i].slot
	}
	return slots
}

// scanTop returns the k first matches of recs in the order o (with more
// after them, in no order) and how many match. The parts of a parallel
// scan keep their own k first; the first part's topK takes the others'.
func (ix *Index) scanTop(recs []record, m *matcher, by Field, o *order, k int) (*topK, int) {
	workers := scanWorkers(len(recs))
	tops := make([]topK, workers)
	counts := make([]int, workers)
	for w := range tops {
		tops[w] = topK{o: o, k: k, buf: ix.topBuf()}
		tops[w].cs = (*tops[w].buf)[:0:topBufLen(k)]
	}
	backwards := laterFirst(recs, by, o)
	// Without filters every record matches: no call of match per record.
	all := m.all
	inParts(len(recs), workers, func(w, lo, hi int) {
		t, n := &tops[w], 0
		i, step, stop := lo, 1, hi
		if backwards {
			i, step, stop = hi-1, -1, lo-1
		}
		for ; i != stop; i += step {
			r := &recs[i]
			if !all && !m.match(r) {
				continue
			}
			n++
			if c := candOf(r, int32(i), by, o.asc); !t.full || !t.behind(&c) {
				t.keep(c)
			}
		}
		counts[w] = n
	})
	t, total := &tops[0], counts[0]
	for w := 1; w < workers; w++ {
		for _, c := range tops[w].cs {
			t.add(c)
		}
		total += counts[w]
		ix.tops.Put(tops[w].buf)
	}
	return t, total
}

// laterFirst reports whether records further on in recs mostly come
// first in the order o, judged from 64 of them: records appended as links
// are created are in the order of created_at (and near it of updated_at),
// and a scan that meets the best last would keep every candidate (O(n),
// but with a cut every k). Such a scan goes backwards.
func laterFirst(recs []record, by Field, o *order) bool {
	const samples = 64
	if len(recs) < 4*samples {
		return false
	}
	step, down := len(recs)/samples, 0
	prev := candOf(&recs[0], 0, by, o.asc)
	for i := step; i < len(recs); i += step {
		c := candOf(&recs[i], int32(i), by, o.asc)
		if c.v < prev.v {
			down++
		}
		prev = c
	}
	return down > samples/2
}

// topBuf returns a buffer for a topK of any k up to maxTopK.
func (ix *Index) topBuf() *[]cand {
	if b, ok := ix.tops.Get().(*[]cand); ok && cap(*b) >= topBufLen(maxTopK) {
		return b
	}
	b := make([]cand, 0, topBufLen(maxTopK))
	return &b
}

// countMatches is how many of recs m matches.
func countMatches(recs []record, m *matcher) int {
	workers := scanWorkers(len(recs))
	counts := make([]int, workers)
	inParts(len(recs), workers, func(w, lo, hi int) {
		for i := lo; i < hi; i++ {
			if m.match(&recs[i]) {
				counts[w]++
			}
		}
	})
	total := 0
	for _, n := range counts {
		total += n
	}
	return total
}

// scanChunk is how many records one goroutine of a scan takes: below it
// a goroutine costs more than it saves. (A variable for the tests.)
var scanChunk = 16384

// scanWorkers is how many goroutines scan n records: up to GOMAXPROCS (at
// most 4), a search of 100 000 links reads a cache line per link, and two
// cores wait for twice as many at once.
func scanWorkers(n int) int {
	return max(1, min(runtime.GOMAXPROCS(0), 4, n/scanChunk))
}

// inParts calls part for each of workers parts of [0, n), in goroutines
// of their own when there are several.
func inParts(n, workers int, part func(w, lo, hi int)) {
	if workers == 1 {
		part(0, 0, n)
		return
	}
	size := (n + workers - 1) / workers
	var wg sync.WaitGroup
	for w := range workers {
		lo, hi := min(w*size, n), min((w+1)*size, n)
		wg.Go(func() { part(w, lo, hi) })
	}
	wg.Wait()
}

// scan returns the candidates of the records m matches, in out (which
// holds len(recs)), each part of a parallel scan filling its own part of
// out before the parts are moved together.
func scan(recs []record, m *matcher, by Field, asc bool, out []cand) []cand {
	workers := scanWorkers(len(recs))
	parts := make([][]cand, workers)
	inParts(len(recs), workers, func(w, lo, hi int) {
		p := out[lo:lo:hi]
		for i := lo; i < hi; i++ {
			if r := &recs[i]; m.all || m.match(r) {
				p = append(p, candOf(r, int32(i), by, asc))
			}
		}
		parts[w] = p
	})
	n := len(parts[0])
	for _, p := range parts[1:] {
		n += copy(out[n:], p)
	}
	return out[:n]
}

// scratch returns a candidate buffer of capacity n or more.
func (ix *Index) scratch(n int) *[]cand {
	if b, ok := ix.cands.Get().(*[]cand); ok && cap(*b) >= n {
		return b
	}
	b := make([]cand, 0, n)
	return &b
}
