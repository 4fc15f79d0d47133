package main

import (
	"context"
	"runtime/debug"
	"testing"
	"time"

	ctrlmanager "sigs.k8s.io/controller-runtime/pkg/manager"
)

func TestTuneGCDefaultsToFiftyAndQuietUnlessGOGCIsSet(t *testing.T) {
	prev := debug.SetGCPercent(100)
	t.Cleanup(func() { debug.SetGCPercent(prev) })

	t.Setenv("GOGC", "")
	if q := tuneGC(); q == nil {
		t.Fatal("GOGC unset: no quiet GC to run")
	}
	if got := debug.SetGCPercent(100); got != defaultGCPercent {
		t.Fatalf("GOGC unset: GC percent %d, want %d", got, defaultGCPercent)
	}

	t.Setenv("GOGC", "100")
	if q := tuneGC(); q != nil {
		t.Fatal("GOGC=100: a quiet GC to run, but the environment chose the percent")
	}
	if got := debug.SetGCPercent(100); got != 100 {
		t.Fatalf("GOGC=100: GC percent %d, want 100 (the environment wins)", got)
	}
}

// adds records the runnables a manager was given.
type adds []ctrlmanager.Runnable

func (a *adds) Add(r ctrlmanager.Runnable) error { *a = append(*a, r); return nil }

// TestGCTunerRunsWithTheServers: the quiet GC runs as a runnable that needs
// no leader (controller-runtime starts those once the caches have synced,
// so a start's stalled stream is not taken for a quiet replica), until its
// context ends; with GOGC set there is none.
func TestGCTunerRunsWithTheServers(t *testing.T) {
	prev := debug.SetGCPercent(100)
	t.Cleanup(func() { debug.SetGCPercent(prev) })
	t.Setenv("GOGC", "")

	var m adds
	if err := addGCTuner(&m, tuneGC()); err != nil || len(m) != 1 {
		t.Fatalf("added %d runnables (%v), want the tuner", len(m), err)
	}
	r, ok := m[0].(ctrlmanager.LeaderElectionRunnable)
	if !ok || r.NeedLeaderElection() {
		t.Fatalf("the tuner %T waits for a leader; it must run on every replica", m[0])
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- m[0].Start(ctx) }()
	select {
	case err := <-done:
		t.Fatalf("the tuner returned %v before its context ended", err)
	case <-time.After(50 * time.Millisecond):
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("the tuner ended with %v", err)
	}

	var none adds
	if err := addGCTuner(&none, nil); err != nil || len(none) != 0 {
		t.Fatalf("GOGC set: added %d runnables (%v), want none", len(none), err)
	}
}
