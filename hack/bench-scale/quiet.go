package main

import (
	"context"
	"fmt"
	"time"
)

// quietRSS is a replica's RSS once it is quiet: kurz lowers its GC percent
// (cmd/kurz/gc.go) after ten seconds of allocating next to nothing, and
// Go's scavenger then returns what lies above the lower heap goal over the
// following minute or so. The RSS at the moment of the settle or 10 s
// after a start is a replica just done working; this is the one it keeps.
type quietRSS struct {
	lowered  time.Duration // from the mark to go_gc_gogc_percent first seen lowered; 0: not within the wait
	steady   time.Duration // from the mark to the RSS read
	rss      int64
	anon     int64
	percent  float64 // go_gc_gogc_percent when read
	measured bool
}

// Quiet-wait's pacing: the RSS is read every quietPoll, the GC percent
// from kurz's metrics every quietScrape (a scrape allocates a few hundred
// KB in kurz, and kurz counts that against being quiet: bench-scale asks
// as often as a Prometheus would), and once the percent is lowered the
// wait ends when the RSS moved less than quietStill over quietStillFor
// (the scavenger is done).
const (
	quietPoll     = 5 * time.Second
	quietScrape   = 15 * time.Second
	quietStill    = 1 << 20
	quietStillFor = 30 * time.Second
)

// waitQuiet waits up to wait from now for kurz (pid, metrics at url) to
// lower its GC percent below busy and for its RSS to stop falling, and
// reads the RSS then; at the end of wait it reads it anyway. mark is what
// the durations count from (the settle, a start's serving).
func waitQuiet(ctx context.Context, url string, pid int, mark time.Time, wait time.Duration, busy float64) (quietRSS, error) {
	q := quietRSS{measured: true, percent: busy}
	deadline := time.Now().Add(wait)
	var scraped, still time.Time
	var low int64
	for {
		if time.Since(scraped) >= quietScrape {
			p, err := kurzMetric(ctx, url, "go_gc_gogc_percent")
			if err != nil {
				return q, err
			}
			scraped, q.percent = time.Now(), p
			if p < busy && q.lowered == 0 {
				q.lowered = time.Since(mark)
			}
		}
		rss, _ := procStatus(pid)
		if q.percent < busy {
			switch {
			case still.IsZero() || rss < low-quietStill:
				still, low = time.Now(), rss
			case time.Since(still) >= quietStillFor:
				return q.read(pid, mark), nil
			}
		} else {
			still = time.Time{}
		}
		if time.Now().Add(quietPoll).After(deadline) {
			return q.read(pid, mark), nil
		}
		select {
		case <-ctx.Done():
			return q, ctx.Err()
		case <-time.After(quietPoll):
		}
	}
}

func (q quietRSS) read(pid int, mark time.Time) quietRSS {
	q.steady = time.Since(mark)
	q.rss, _ = procStatus(pid)
	q.anon, _ = rssParts(pid)
	return q
}

// describe is the report's value for q, perLink the per-link suffix.
func (q quietRSS) describe(perLink func(int64) string) string {
	if q.lowered == 0 {
		return fmt.Sprintf("%s%s, %s after (GC percent never lowered: %.0f; not quiet)", mib(q.rss), perLink(q.rss), secs(q.steady), q.percent)
	}
	return fmt.Sprintf("%s%s, %s after (GC percent first seen lowered %s after, %.0f at the end; anonymous %s)",
		mib(q.rss), perLink(q.rss), secs(q.steady), secs(q.lowered), q.percent, mib(q.anon))
}

// busyGCPercent is kurz's GC percent while it works (cmd/kurz/gc.go's
// defaultGCPercent); below it, the quiet one is set.
const busyGCPercent = 50

// ofSettled is q (a restart's) against settled's RSS, issue 31's "after a
// restart at most 1.2x the settled figure".
func (q quietRSS) ofSettled(settled quietRSS) string {
	if !settled.measured || settled.rss == 0 {
		return ""
	}
	return fmt.Sprintf("; %.2fx the settled replica's once quiet", float64(q.rss)/float64(settled.rss))
}
