package main

import (
	"context"
	"runtime/debug"
	"testing"
)

func TestTuneGCDefaultsToFiftyAndQuietUnlessGOGCIsSet(t *testing.T) {
	prev := debug.SetGCPercent(100)
	t.Cleanup(func() { debug.SetGCPercent(prev) })
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)

	t.Setenv("GOGC", "")
	if q := tuneGC(ctx); q == nil {
		t.Fatal("GOGC unset: no quiet GC runs")
	}
	if got := debug.SetGCPercent(100); got != defaultGCPercent {
		t.Fatalf("GOGC unset: GC percent %d, want %d", got, defaultGCPercent)
	}
	cancel()

	t.Setenv("GOGC", "100")
	if q := tuneGC(context.Background()); q != nil {
		t.Fatal("GOGC=100: a quiet GC runs, but the environment chose the percent")
	}
	if got := debug.SetGCPercent(100); got != 100 {
		t.Fatalf("GOGC=100: GC percent %d, want 100 (the environment wins)", got)
	}
}
