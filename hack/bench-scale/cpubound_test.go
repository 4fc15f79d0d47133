package main

import (
	"strings"
	"testing"
	"time"
)

func TestAPIServerAgainstFloor(t *testing.T) {
	floors := []cpuSpan{{wall: 130 * time.Second, apiServer: 200}, {wall: 140 * time.Second, apiServer: 220}}
	for _, tt := range []struct {
		name    string
		floors  []cpuSpan
		start   float64
		want    string
		flagged bool
	}{
		{"as in the floor", floors, 231, "; kube-apiserver spent 1.10× its CPU of a floor read", false},
		{"a slow run", floors, 420, "; kube-apiserver spent 2.00× its CPU of a floor read", true},
		{"no floor read", nil, 231, "", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f := startFigures{floorCPU: tt.floors, cpuUntilServed: cpuSpan{wall: time.Minute, apiServer: tt.start}}
			got := f.apiServerAgainstFloor()
			if !strings.HasPrefix(got, tt.want) || (tt.want == "") != (got == "") {
				t.Fatalf("got %q, want it to begin with %q", got, tt.want)
			}
			if flagged := strings.Contains(got, "ran slower"); flagged != tt.flagged {
				t.Fatalf("got %q: flagged %v, want %v", got, flagged, tt.flagged)
			}
		})
	}
}
