package main

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"runtime/metrics"
	"strings"
	"time"

	"github.com/kurz-dev/kurz/internal/gctune"
)

// sink keeps the idle allocations from being optimised away.
var sink []byte

// idle stays d after the feed, allocating perSecond bytes of garbage a
// second in 4 KiB pieces, with kurz's quiet GC tuning when quiet > 0, and
// prints the RSS and the GC's CPU every 30 s: what a settled replica holds
// with the Links' heap, not what the heap profile counts.
func idle(d time.Duration, busy, quiet, perSecond int) {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	if quiet > 0 {
		go gctune.NewQuiet(busy, quiet, time.Second, 10).Run(ctx, time.Second)
	}
	samples := []metrics.Sample{{Name: "/cpu/classes/gc/total:cpu-seconds"}, {Name: "/gc/cycles/total:gc-cycles"}, {Name: "/gc/heap/live:bytes"}}
	metrics.Read(samples)
	gc0, n0 := samples[0].Value.Float64(), samples[1].Value.Uint64()
	start := time.Now()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	report := time.NewTicker(30 * time.Second)
	defer report.Stop()
	for {
		select {
		case <-ctx.Done():
			runtime.KeepAlive(sink)
			return
		case <-tick.C:
			for range perSecond / 10 / 4096 {
				sink = make([]byte, 4096)
			}
		case <-report.C:
			metrics.Read(samples)
			rss, anon := status("VmRSS"), status("RssAnon")
			fmt.Printf("idle %3.0fs: RSS %d MiB (anonymous %d MiB), live heap %.1f MB, %d GCs, GC CPU %.2f s\n",
				time.Since(start).Seconds(), rss>>20, anon>>20, float64(samples[2].Value.Uint64())/1e6,
				samples[1].Value.Uint64()-n0, samples[0].Value.Float64()-gc0)
		}
	}
}

// status reads a field of /proc/self/status in bytes.
func status(field string) int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok && k == field {
			var kb int64
			_, _ = fmt.Sscan(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), &kb)
			return kb << 10
		}
	}
	return 0
}
