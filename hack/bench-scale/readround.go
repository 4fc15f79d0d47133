package main

import (
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
	"time"
)

// readFigure is one read of the API, repeated through a readRound.
type readFigure struct {
	name string
	path func() string // the next request's path under /api/v1
	// lat and at are each request's latency and its start since the
	// manager's; after is the figure whose request came just before it
	// ("" for the round's first).
	lat, at []time.Duration
	after   []string
}

func readOf(name, path string) *readFigure {
	return &readFigure{name: name, path: func() string { return path }}
}

// readRound sends the figures' requests in turns, one at a time, one of
// each figure in a turn, until c.apiDuration has passed and every figure
// has c.apiSamples requests; then adds each figure's p50, p99 and max to
// r.
//
// Each turn takes the figures in a new random order (seeded, so runs
// repeat). In a fixed order a figure always follows the same one: the
// lookup always came right after a search that reads every Link's record
// (25 ms on one core), and had a p50 1.5x the show's and a p99 2.8x it
// (fb04816), for no more work than a show. Readers of a replica come in
// no order; the CSV names each request's predecessor, to tell what a
// figure costs after another.
//
// Taking turns is what makes a p99 the replica's: the collector marks the
// heap every few seconds under these requests (each allocates a few KB),
// for a few hundred ms, and a request inside a mark can wait for a mark
// worker's time slice. Two hundred requests of one figure in a row take
// under a second, so whether they met a mark was chance, and it decided
// their p99: the third slowest. In turns over a minute every figure meets
// the marks in the share they have of the replica's time.
//
// With GODEBUG=gctrace=1 in the manager's environment (-manager-env), it
// logs how many requests over slowRequest overlapped a collection, read
// from the manager's log at managerLog.
func readRound(a apiClient, c config, figs []*readFigure, managerLog string, r *results) error {
	var before tailSample
	if a.probe != nil {
		before = a.probe.sample()
	}
	// This process times the requests on the same cores: its own
	// collections (idle mark workers take every core its goroutines leave
	// while they wait for an answer) would be in kurz's figures. The round
	// allocates a few hundred MB at most, so it runs without them.
	runtime.GC()
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	rng := rand.New(rand.NewPCG(3, 4))
	prev := ""
	begin := time.Now()
	for turn := 0; time.Since(begin) < c.apiDuration || turn < c.apiSamples; turn++ {
		for _, i := range rng.Perm(len(figs)) {
			f := figs[i]
			path := f.path()
			start := time.Now()
			if _, err := a.call(http.MethodGet, path, nil); err != nil {
				return err
			}
			f.lat = append(f.lat, time.Since(start))
			f.after = append(f.after, prev)
			prev = f.name
			if a.probe != nil {
				f.at = append(f.at, start.Sub(a.probe.started))
			}
		}
	}
	wall := time.Since(begin)
	if err := saveReads(filepath.Join(c.outDir, "api-reads.csv"), figs); err != nil {
		logf("read round: %v", err)
	}
	if a.probe != nil {
		a.probe.report(fmt.Sprintf("read round, %d figures in turns", len(figs)), before, a.probe.sample(), nil)
		reportMarks(a.probe, figs, managerLog, begin, wall)
	}
	for _, f := range figs {
		lat := slices.Sorted(slices.Values(f.lat))
		r.api = append(r.api, apiFigure{name: fmt.Sprintf("%s (%d requests)", f.name, len(lat)), p50: pctl(lat, 0.50), p99: pctl(lat, 0.99), max: lat[len(lat)-1]})
	}
	return nil
}

// reportMarks logs, for the round and for each figure with requests over
// slowRequest, how many of those overlapped a collection of the manager.
func reportMarks(p *tailProbe, figs []*readFigure, managerLog string, begin time.Time, wall time.Duration) {
	marks, err := readGCMarks(managerLog)
	if err != nil {
		logf("read round: collections: %v", err)
		return
	}
	from := begin.Sub(p.started)
	n, covered := marked(marks, from, from+wall)
	requests, slow, slowInMark := 0, 0, 0
	for _, f := range figs {
		s, sm := 0, 0
		for i, d := range f.lat {
			if d <= slowRequest {
				continue
			}
			s++
			if during(marks, f.at[i], d) {
				sm++
			}
		}
		requests += len(f.lat)
		slow += s
		slowInMark += sm
		switch {
		case s > 0 && len(marks) > 0:
			logf("read round %q: %d of %d requests over %s, %d of them during a collection", f.name, s, len(f.lat), slowRequest, sm)
		case s > 0:
			logf("read round %q: %d of %d requests over %s", f.name, s, len(f.lat), slowRequest)
		}
	}
	if len(marks) == 0 {
		logf("read round: %.1f s, %d requests, %d over %s; no collection in the manager's log (run with -manager-env GODEBUG=gctrace=1 to match them)", wall.Seconds(), requests, slow, slowRequest)
		return
	}
	logf("read round: %.1f s, %d requests, %d over %s (%d during a collection); %d collections marked for %.1f s (%.1f%% of the round)",
		wall.Seconds(), requests, slow, slowRequest, slowInMark, n, covered.Seconds(), 100*covered.Seconds()/wall.Seconds())
}

// saveReads writes every request of the round, one line each: its figure,
// its start since the manager's (when the tail probe ran), its latency, in
// seconds, and the figure that came just before it, for what the summary
// leaves out (e.g. a figure's p99 outside the collections of the
// manager's gctrace, or after a search).
func saveReads(path string, figs []*readFigure) error {
	var b strings.Builder
	b.WriteString("figure,start_s,latency_s,after\n")
	for _, f := range figs {
		for i, d := range f.lat {
			var at float64
			if i < len(f.at) {
				at = f.at[i].Seconds()
			}
			fmt.Fprintf(&b, "%q,%.6f,%.6f,%q\n", f.name, at, d.Seconds(), f.after[i])
		}
	}
	return os.WriteFile(path, []byte(b.String()), 0o644)
}
