// Package gctune sets the Go collector's percent for a replica: lower while
// the process allocates little (settled), back to the default at the first
// sign of work. Every kurz replica runs it (cmd/kurz/gc.go: 50 while busy,
// 10 while quiet, unless GOGC is set); hack/bench-mem runs it (-quiet-gc)
// to measure what it saves. A settled, idle replica allocates a few KB a
// second (7 KB/s at 20 000 Links), far below the threshold; the 0.75 MB/s
// once measured was its click writer working through a benchmark's clicks
// (docs/scaling.md, "A lower GC percent while the replica is quiet").
package gctune

import (
	"context"
	"runtime/debug"
	"runtime/metrics"
	"time"
)

// Quiet lowers the GC percent from busy to quiet while the process
// allocates so little that, at the quiet percent, it would collect at most
// once per MinPeriod, and raises it back at the first interval that
// allocates more. A settled replica allocates little (the redirect path
// nothing; leases, probes and scrapes some kilobytes a second), so it
// then collects as before: once every 2 minutes, Go's forced collection,
// only with a heap goal of (100+quiet)% of the live objects instead of
// (100+busy)%, and the runtime's scavenger returns the rest to the OS.
// Work (a settle, a restart's first pass, an import, the API's lists)
// allocates more and runs at busy, as before.
type Quiet struct {
	busy, quiet int
	// threshold is the allocation per interval, as a fraction of the live
	// heap, below which an interval is quiet: quiet% of the live heap
	// spread over MinPeriod.
	threshold float64
	// quietFor is how many quiet intervals in a row switch to the quiet
	// percent: a pause between two bursts of work is not yet quiet.
	quietFor int
	streak   int // quiet intervals in a row
	lowered  bool
	last     uint64 // the allocation counter at the previous observation
	// collected is when Run last collected on lowering the percent.
	collected time.Time
}

// collectEvery bounds how often Run collects on lowering the percent:
// Go's forced collection, which wakes the scavenger anyway, runs when two
// minutes pass without one.
const collectEvery = 2 * time.Minute

// MinPeriod is the shortest time between two collections Quiet lets the
// quiet percent cause.
const MinPeriod = 20 * time.Second

// NewQuiet returns a Quiet that switches between the busy and quiet
// percents, observed every interval, lowering after quietFor quiet
// intervals in a row.
func NewQuiet(busy, quiet int, interval time.Duration, quietFor int) *Quiet {
	return &Quiet{busy: busy, quiet: quiet, quietFor: quietFor,
		threshold: float64(quiet) / 100 * interval.Seconds() / MinPeriod.Seconds()}
}

// Observe takes the cumulative bytes allocated and the live heap, and
// returns the GC percent to set and whether it differs from the one set.
func (q *Quiet) Observe(allocated, live uint64) (percent int, change bool) {
	delta := allocated - q.last
	q.last = allocated
	if live == 0 || float64(delta) > q.threshold*float64(live) {
		q.streak = 0
		if q.lowered {
			q.lowered = false
			return q.busy, true
		}
		return q.busy, false
	}
	q.streak++
	if !q.lowered && q.streak >= q.quietFor {
		q.lowered = true
		return q.quiet, true
	}
	if q.lowered {
		return q.quiet, false
	}
	return q.busy, false
}

// Run observes the runtime's counters every interval and sets the GC
// percent Observe returns, until ctx ends. On lowering it also collects
// and returns every free page to the OS at once (debug.FreeOSMemory). Go's
// background scavenger returns only what lies above 1.1x the heap goal,
// and it sleeps while it has nothing to return, woken at the end of a
// collection, not by a new percent: a replica that went quiet right after
// work kept what that work grew to until Go's forced collection two
// minutes later (bench-scale at 100 000 Links: 384 MiB 45 s after the
// settle, the percent lowered, not a page returned), and after a
// collection still kept the scavenger's tenth (279 and 287 MiB in two
// runs). A quiet replica allocates a few KB a second, so the pages it
// gives back are not soon faulted in again. It does so at most once per
// collectEvery: a replica whose quiet is broken by each Prometheus scrape
// (a scrape allocates a few hundred KB or more at once: the 100 000-Link
// replica of bench-scale collected at each of its reads, every 15 s)
// would otherwise do it at every scrape; and a busy spell's memory
// waits at most that long, Go's own forced collection.
func (q *Quiet) Run(ctx context.Context, interval time.Duration) {
	samples := []metrics.Sample{{Name: "/gc/heap/allocs:bytes"}, {Name: "/gc/heap/live:bytes"}}
	metrics.Read(samples)
	q.last = samples[0].Value.Uint64()
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		metrics.Read(samples)
		if p, change := q.Observe(samples[0].Value.Uint64(), samples[1].Value.Uint64()); change {
			debug.SetGCPercent(p)
			if p == q.quiet && q.collectOnLowering(time.Now()) {
				debug.FreeOSMemory()
			}
		}
	}
}

// collectOnLowering reports whether Run collects on lowering the percent
// at now: at most once per collectEvery.
func (q *Quiet) collectOnLowering(now time.Time) bool {
	if !q.collected.IsZero() && now.Sub(q.collected) < collectEvery {
		return false
	}
	q.collected = now
	return true
}
