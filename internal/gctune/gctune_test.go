package gctune

import (
	"testing"
	"time"
)

const busy, quiet = 50, 25

func TestQuietLowersThePercentOnlyAfterQuietIntervalsAndRaisesItAtTheFirstBusyOne(t *testing.T) {
	// 25 % of 160 MiB over 20 s: 2 MiB a second, 10 MiB an interval of 5 s.
	const live = 160 << 20
	q := NewQuiet(busy, quiet, 5*time.Second, 2)
	var allocated uint64
	step := func(delta uint64, wantPercent int, wantChange bool) {
		t.Helper()
		allocated += delta
		p, change := q.Observe(allocated, live)
		if p != wantPercent || change != wantChange {
			t.Fatalf("after %d bytes: percent %d (change %v), want %d (change %v)", delta, p, change, wantPercent, wantChange)
		}
	}
	step(100<<20, busy, false) // a settle's allocations
	step(1<<20, busy, false)   // one quiet interval: not yet
	step(1<<20, quiet, true)   // two: lowered
	step(1<<20, quiet, false)  // stays, no call
	step(10<<20, quiet, false) // exactly the threshold is still quiet
	step(10<<20+1, busy, true) // more: raised at once
	step(1<<20, busy, false)
	step(1<<20, quiet, true)
}

func TestQuietStaysBusyBeforeTheFirstCollection(t *testing.T) {
	q := NewQuiet(busy, quiet, time.Second, 2)
	for range 5 {
		// No live heap measured yet (no collection ran): a start.
		if p, change := q.Observe(0, 0); p != busy || change {
			t.Fatalf("percent %d (change %v) before a collection, want %d", p, change, busy)
		}
	}
}

// Run collects on lowering the percent to wake the scavenger, but a
// replica whose quiet each scrape breaks would lower it every scrape: it
// collects at most once per collectEvery.
func TestCollectOnLoweringAtMostOncePerPeriod(t *testing.T) {
	q := NewQuiet(busy, quiet, time.Second, 10)
	at := time.Date(2026, 11, 27, 3, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		after time.Duration
		want  bool
	}{
		{0, true},                 // the first quiet spell
		{15 * time.Second, false}, // a scrape later
		{collectEvery - time.Second, false},
		{collectEvery, true}, // a period after the last collection
		{collectEvery + 15*time.Second, false},
	} {
		if got := q.collectOnLowering(at.Add(c.after)); got != c.want {
			t.Errorf("lowered %s after the first: collect %v, want %v", c.after, got, c.want)
		}
	}
}
