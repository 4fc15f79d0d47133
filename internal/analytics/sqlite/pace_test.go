package sqlite

import (
	"testing"
	"time"
)

// The writer pauses after every paceRows rows, for as long as those rows
// took (never a negative or zero-work pause before the first chunk).
func TestPacer(t *testing.T) {
	var pauses []time.Duration
	p := newPacer()
	p.sleep = func(d time.Duration) { pauses = append(pauses, d) }
	p.start = time.Now().Add(-time.Hour) // the chunk "took" an hour
	for range paceRows - 1 {
		p.row()
	}
	if len(pauses) != 0 {
		t.Fatalf("paused after %d rows: %v", paceRows-1, pauses)
	}
	p.row()
	if len(pauses) != 1 || pauses[0] < time.Hour {
		t.Fatalf("after %d rows: pauses %v, want one of the chunk's hour", paceRows, pauses)
	}
	for range 2*paceRows + 3 {
		p.row()
	}
	if len(pauses) != 3 {
		t.Fatalf("after %d rows: %d pauses, want 3", 3*paceRows+3, len(pauses))
	}
	if pauses[1] >= time.Hour {
		t.Fatalf("the second chunk's pause %v counts the first chunk's time", pauses[1])
	}
}
