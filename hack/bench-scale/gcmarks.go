package main

import (
	"bufio"
	"os"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// gcMark is one collection of the manager, on the clock of its start:
// from the first stop-the-world pause to the end of the last one.
type gcMark struct {
	start, end time.Duration
}

// gctraceLine matches GODEBUG=gctrace=1's summary line of a collection:
// "gc 122 @418.393s 1%: 1.3+215+0.12 ms clock, ...", the three clock
// figures being the sweep termination, the concurrent mark and the mark
// termination.
var gctraceLine = regexp.MustCompile(`^gc \d+ @([0-9.]+)s \d+%: ([0-9.]+)\+([0-9.]+)\+([0-9.]+) ms clock`)

// readGCMarks reads every collection that GODEBUG=gctrace=1 wrote into the
// manager's log at path; none when the trace was off.
func readGCMarks(path string) ([]gcMark, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer func() { _ = f.Close() }()
	var marks []gcMark
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, "gc ") {
			continue
		}
		m := gctraceLine.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		at, _ := strconv.ParseFloat(m[1], 64)
		var clock float64
		for _, s := range m[2:] {
			v, _ := strconv.ParseFloat(s, 64)
			clock += v
		}
		start := time.Duration(at * float64(time.Second))
		marks = append(marks, gcMark{start: start, end: start + time.Duration(clock*float64(time.Millisecond))})
	}
	return marks, sc.Err()
}

// during tells whether a request from start for d overlapped a collection.
func during(marks []gcMark, start, d time.Duration) bool {
	for _, m := range marks {
		if start < m.end && start+d > m.start {
			return true
		}
	}
	return false
}

// marked sums how much of [from, to) the collections covered.
func marked(marks []gcMark, from, to time.Duration) (n int, covered time.Duration) {
	for _, m := range marks {
		s, e := max(m.start, from), min(m.end, to)
		if e > s {
			n++
			covered += e - s
		}
	}
	return n, covered
}
