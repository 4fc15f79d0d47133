package sqlite

import (
	"testing"
	"time"
)

// The writer pauses after every paceRows rows, for as long as those rows
// took, at most maxPause.
func TestPacer(t *testing.T) {
	var pauses []time.Duration
	clock := time.Unix(1e9, 0)
	p := newPacer()
	p.start, p.now = clock, func() time.Time { return clock }
	p.sleep = func(d time.Duration) { pauses = append(pauses, d) }
	rows := func(n int, took time.Duration) {
		for range n {
			clock = clock.Add(took / time.Duration(n))
			p.row()
		}
	}
	rows(paceRows-1, 70*time.Microsecond)
	if len(pauses) != 0 {
		t.Fatalf("paused after %d rows: %v", paceRows-1, pauses)
	}
	rows(1, 10*time.Microsecond)
	rows(paceRows, time.Hour) // a chunk that waited for the processor
	rows(paceRows+3, 0)
	want := []time.Duration{80 * time.Microsecond, maxPause, 0}
	if len(pauses) != len(want) {
		t.Fatalf("pauses %v, want %v", pauses, want)
	}
	for i := range want {
		if pauses[i] != want[i] {
			t.Fatalf("pauses %v, want %v", pauses, want)
		}
	}
}
