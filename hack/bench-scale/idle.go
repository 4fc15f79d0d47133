package main

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// idleAlloc is what the settled replica allocates once it is idle.
type idleAlloc struct {
	// drained is when, after the settle, kurz_clicks_pending reached 0:
	// the redirect run clicks on nearly every Link, and the click writer
	// patches them at --click-flush-qps (50/s: 400 s for 20 000 Links),
	// a replica at work, not an idle one. 0: not within the idle wait.
	drained time.Duration
	pending float64 // clicks still pending at the end, when not drained
	from    time.Duration
	to      time.Duration // the window, after the settle
	bytes   float64       // go_memstats_alloc_bytes_total over the window
}

// measureIdle waits until deadline and measures what kurz allocates from
// the moment its clicks are written (polled every 2 s) to deadline, with
// nothing else asking anything of it but the two reads of its metrics.
func measureIdle(ctx context.Context, url string, settledAt, deadline time.Time) (idleAlloc, error) {
	var a idleAlloc
	for {
		pending, err := kurzMetric(ctx, url, "kurz_clicks_pending")
		if err != nil {
			return a, err
		}
		if pending == 0 {
			a.drained = time.Since(settledAt)
			break
		}
		if time.Until(deadline) < 10*time.Second {
			a.pending = pending
			break
		}
		select {
		case <-ctx.Done():
			return a, ctx.Err()
		case <-time.After(2 * time.Second):
		}
	}
	a.from = time.Since(settledAt)
	before, err := kurzMetric(ctx, url, "go_memstats_alloc_bytes_total")
	if err != nil {
		return a, err
	}
	select {
	case <-ctx.Done():
		return a, ctx.Err()
	case <-time.After(time.Until(deadline)):
	}
	after, err := kurzMetric(ctx, url, "go_memstats_alloc_bytes_total")
	if err != nil {
		return a, err
	}
	a.to, a.bytes = time.Since(settledAt), after-before
	return a, nil
}

// row is the report's line for a.
func (a idleAlloc) row() (string, string) {
	k := fmt.Sprintf("kurz allocated while idle, %s to %s after the settle", secs(a.from), secs(a.to))
	v := "no window"
	if d := (a.to - a.from).Seconds(); d > 0 {
		v = fmt.Sprintf("%.1f KB/s", a.bytes/d/1e3)
	}
	if a.drained > 0 {
		v += fmt.Sprintf(" (the redirect run's clicks written %s after the settle)", secs(a.drained))
	} else {
		v += fmt.Sprintf(" (with %.0f clicks still pending: the click writer was at work)", a.pending)
	}
	return k, v
}

// kurzMetric reads the unlabelled sample name from kurz's metrics at url.
func kurzMetric(ctx context.Context, url, name string) (float64, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return 0, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, fmt.Errorf("kurz metrics: %w", err)
	}
	defer func() { _ = resp.Body.Close() }()
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), name+" "); ok {
			return strconv.ParseFloat(v, 64)
		}
	}
	if err := sc.Err(); err != nil {
		return 0, fmt.Errorf("kurz metrics: %w", err)
	}
	return 0, fmt.Errorf("kurz metrics: no %s", name)
}
