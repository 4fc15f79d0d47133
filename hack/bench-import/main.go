// Command bench-import measures creating links through kurz's API as an
// importer does (make bench-import): it starts `bin/kurz dev` on free
// ports in a temporary data directory, creates one Domain and measures
//
//   - bulk create: -bulk-requests POST /api/v1/links/bulk of 100 new links
//     each, one after another, p50 and p99 of the answer time;
//   - `kurz import --api` of -n links from a kurz CSV with the caller's rate
//     limit off (kurz dev --api-rate-limit=0): wall time and links a second;
//   - how long after the import the Link controller has judged every link
//     (its first status write, which also records the created/updated
//     stamps), and the CPU of import and settle together;
//   - then it restarts kurz dev on the same data directory at the default
//     rate limit (600 items a minute per ServiceAccount) and imports
//     -limited-n more links: the wall time against the limit's own pace
//     (the first 600 from the full bucket, the rest at 10 a second), and
//     every ETA the import printed (a line every -progress-every) against
//     the time the import really took from then on.
//
// kurz import runs as a user runs it (a separate process, token from the
// data directory, progress on a pipe, so plain lines). Figures go to stdout
// as Markdown. The machine is what it is: on a shared one, say so.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"
)

type config struct {
	kurz         string
	n, limitedN  int
	bulkRequests int
	keep         bool
}

func main() {
	var c config
	flag.StringVar(&c.kurz, "kurz", "bin/kurz", "The kurz binary (kurz dev and kurz import).")
	flag.IntVar(&c.n, "n", 10000, "Links imported with the rate limit off.")
	flag.IntVar(&c.limitedN, "limited-n", 1500, "Links imported at the default rate limit (600 a minute: 1 500 take about 90 s); 0 skips it.")
	flag.IntVar(&c.bulkRequests, "bulk-requests", 20, "Bulk creates of 100 links timed one by one.")
	flag.BoolVar(&c.keep, "keep", false, "Keep the data directory (its path is printed).")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, c); err != nil {
		fmt.Fprintln(os.Stderr, "bench-import:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, c config) error {
	dir, err := os.MkdirTemp("", "kurz-bench-import-")
	if err != nil {
		return err
	}
	if c.keep {
		fmt.Fprintln(os.Stderr, "data directory:", dir)
	} else {
		defer func() { _ = os.RemoveAll(dir) }()
	}
	host, _ := os.Hostname()
	fmt.Printf("# kurz bench-import on %s, %d CPUs, %s\n\n", host, numCPU(), time.Now().UTC().Format(time.RFC3339))

	dev, err := startDev(ctx, c.kurz, dir, "--api-rate-limit=0")
	if err != nil {
		return err
	}
	api := dev.client(ctx)
	if err := api.createDomain(benchDomain); err != nil {
		dev.stop()
		return err
	}
	load, cpu0 := loadAverage(), serverCPU(dir)
	lat, err := api.bulkLatency(c.bulkRequests)
	if err != nil {
		dev.stop()
		return err
	}
	cpu := serverCPU(dir).since(cpu0)
	fmt.Printf("| figure | value | CPU (kurz dev, etcd, kube-apiserver, kurz import) | load average before |\n|---|---|---|---|\n")
	fmt.Printf("| bulk create of 100 links, %d requests one after another | p50 %s, p99 %s, max %s | %.1f s, %.1f ms a link (%s) | %s |\n",
		len(lat), ms(pctl(lat, 0.50)), ms(pctl(lat, 0.99)), ms(pctl(lat, 1)), cpu.total(), cpu.total()*1000/float64(100*len(lat)), cpu.perLink(100*len(lat)), load)

	load = loadAverage()
	cpu0 = serverCPU(dir)
	fast, err := importCSV(ctx, c.kurz, dev, "fast", c.n)
	if err != nil {
		dev.stop()
		return err
	}
	fmt.Printf("| kurz import --api of %d links, --api-rate-limit=0 | %s, %.0f links/s, created %d | %.0f s, %.1f ms a link (%s) | %s |\n",
		c.n, fast.elapsed.Round(100*time.Millisecond), float64(c.n)/fast.elapsed.Seconds(), fast.created,
		fast.cpu.total(), fast.cpu.total()*1000/float64(c.n), fast.cpu.perLink(c.n), load)
	// The status writes the controller has still to make after the import
	// answered belong to its cost: every link judged (Ready written).
	settle, err := api.awaitJudged(100*len(lat) + fast.created)
	cpu = serverCPU(dir).since(cpu0)
	dev.stop()
	if err != nil {
		return err
	}
	fmt.Printf("| the same, until the controller judged every link (Ready and the stamps written) | %s after the import, %s in all | %.0f s, %.1f ms a link (%s) | |\n",
		settle.Round(100*time.Millisecond), (fast.elapsed + settle).Round(100*time.Millisecond),
		cpu.total(), cpu.total()*1000/float64(c.n), cpu.perLink(c.n))
	if c.limitedN == 0 {
		return nil
	}

	dev, err = startDev(ctx, c.kurz, dir) // the default rate limit
	if err != nil {
		return err
	}
	defer dev.stop()
	load = loadAverage()
	slow, err := importCSV(ctx, c.kurz, dev, "limited", c.limitedN)
	if err != nil {
		return err
	}
	pace := limitPace(c.limitedN)
	fmt.Printf("| kurz import --api of %d links at the default limit (600/min) | %s (the limit's pace: %s), created %d | %.0f s | %s |\n",
		c.limitedN, slow.elapsed.Round(100*time.Millisecond), pace.Round(100*time.Millisecond), slow.created, slow.cpu.total(), load)
	fmt.Printf("\nETAs printed by the import at the default limit (every 10 s), against the time it really took from then on:\n\n")
	fmt.Printf("| at | printed | done | ETA | really left | error |\n|---|---|---|---|---|---|\n")
	for _, l := range slow.etas {
		left := slow.elapsed - l.at
		fmt.Printf("| %s | %s | %d/%d | %s | %s | %+.1f s |\n", l.at.Round(100*time.Millisecond), l.text, l.done, c.limitedN,
			l.eta, left.Round(100*time.Millisecond), (l.eta - left).Seconds())
	}
	return nil
}

// limitPace is how long n items take at 600 a minute from a full bucket.
func limitPace(n int) time.Duration {
	const limit, perSecond = 600, 10.0
	if n <= limit {
		return 0
	}
	return time.Duration(float64(n-limit) / perSecond * float64(time.Second))
}

func ms(d time.Duration) string { return fmt.Sprintf("%.0f ms", float64(d)/float64(time.Millisecond)) }
