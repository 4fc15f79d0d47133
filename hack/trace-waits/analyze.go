package main

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"golang.org/x/exp/trace"
)

// interval is a goroutine's time on a processor, or a collection's mark.
type interval struct {
	g        trace.GoID
	from, to trace.Time
}

// wait is a goroutine's time runnable before it ran, and who ran
// meanwhile: time by entry function.
type wait struct {
	g        trace.GoID
	entry    string
	from, to trace.Time
	inMark   bool
	held     map[string]time.Duration
}

// analysis is what analyze found.
type analysis struct {
	start trace.Time
	marks []interval
	waits []wait
}

// analyze reads a trace and finds the waits of at least least.
func analyze(r io.Reader, least time.Duration) (*analysis, error) {
	tr, err := trace.NewReader(r)
	if err != nil {
		return nil, err
	}
	a := &analysis{}
	entry := map[trace.GoID]string{}
	runnable := map[trace.GoID]trace.Time{}
	running := map[trace.GoID]trace.Time{}
	var runs []interval
	var markFrom trace.Time
	for {
		e, err := tr.ReadEvent()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		if a.start == 0 {
			a.start = e.Time()
		}
		switch e.Kind() {
		case trace.EventRangeBegin:
			if strings.HasPrefix(e.Range().Name, "GC concurrent mark") {
				markFrom = e.Time()
			}
		case trace.EventRangeEnd:
			if strings.HasPrefix(e.Range().Name, "GC concurrent mark") && markFrom != 0 {
				a.marks = append(a.marks, interval{from: markFrom, to: e.Time()})
				markFrom = 0
			}
		case trace.EventStateTransition:
			st := e.StateTransition()
			if st.Resource.Kind != trace.ResourceGoroutine {
				continue
			}
			g := st.Resource.Goroutine()
			// The outermost frame of a goroutine's stack is the function
			// it was started with: its name in the report.
			for f := range st.Stack.Frames() {
				entry[g] = f.Func
			}
			from, to := st.Goroutine()
			switch to {
			case trace.GoRunnable:
				runnable[g] = e.Time()
			case trace.GoRunning:
				if t, ok := runnable[g]; ok && from == trace.GoRunnable && time.Duration(e.Time()-t) >= least {
					a.waits = append(a.waits, wait{g: g, from: t, to: e.Time()})
				}
				running[g] = e.Time()
			}
			if from == trace.GoRunning {
				if t, ok := running[g]; ok {
					runs = append(runs, interval{g: g, from: t, to: e.Time()})
					delete(running, g)
				}
			}
		}
	}
	for i := range a.waits {
		w := &a.waits[i]
		w.entry = entry[w.g]
		w.inMark = overlaps(a.marks, w.from, w.to)
		w.held = map[string]time.Duration{}
		for _, r := range runs {
			if from, to := max(r.from, w.from), min(r.to, w.to); to > from && r.g != w.g {
				w.held[entry[r.g]] += time.Duration(to - from)
			}
		}
	}
	return a, nil
}

func overlaps(marks []interval, from, to trace.Time) bool {
	for _, m := range marks {
		if from < m.to && to > m.from {
			return true
		}
	}
	return false
}

// byTime sorts held's entries, the longest first.
func byTime(held map[string]time.Duration) []string {
	names := make([]string, 0, len(held))
	for n := range held {
		names = append(names, n)
	}
	slices.SortFunc(names, func(x, y string) int { return int(held[y] - held[x]) })
	return names
}

func (a *analysis) print(w io.Writer) {
	ms := func(d time.Duration) float64 { return float64(d) / 1e6 }
	inMark := 0
	total := map[string]time.Duration{}
	for _, x := range a.waits {
		top := byTime(x.held)[:min(len(x.held), 4)]
		parts := make([]string, 0, len(top))
		for _, n := range top {
			parts = append(parts, fmt.Sprintf("%s %.1f ms", n, ms(x.held[n])))
		}
		for n, d := range x.held {
			total[n] += d
		}
		if x.inMark {
			inMark++
		}
		_, _ = fmt.Fprintf(w, "@%.3fs waited %.1f ms: goroutine %d (%s), during a mark %v; ran meanwhile: %s\n",
			time.Duration(x.from-a.start).Seconds(), ms(time.Duration(x.to-x.from)), x.g, x.entry, x.inMark, strings.Join(parts, "; "))
	}
	_, _ = fmt.Fprintf(w, "%d waits, %d of them during one of the trace's %d marks; what ran meanwhile, summed:\n", len(a.waits), inMark, len(a.marks))
	for _, n := range byTime(total)[:min(len(total), 15)] {
		_, _ = fmt.Fprintf(w, "  %8.1f ms  %s\n", ms(total[n]), n)
	}
}
