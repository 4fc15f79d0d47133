package main

import (
	"context"
	"os"
	"runtime/debug"
	"time"

	"github.com/kurz-dev/kurz/internal/gctune"
)

// defaultGCPercent is kurz's GOGC unless the environment sets one. Every
// replica holds every Link in memory and the redirect path allocates
// nothing, so most of the heap is long-lived: at 50 the heap grows to 1.5x
// the live objects between collections instead of Go's 2x, which is most of
// a replica's memory per link at scale (docs/scaling.md), for GC
// cycles that cost little once the caches are filled.
const defaultGCPercent = 50

// quietGCPercent is the GC percent while the replica allocates little
// (gctune.Quiet): the heap's goal 1.1x the live objects instead of 1.5x,
// and the runtime's scavenger returns what lies above it to the OS.
const quietGCPercent = 10

// quietGCInterval is how often gctune.Quiet reads the allocation counter
// (a few microseconds), and quietGCAfter how many quiet intervals in a row
// lower the percent. Work that starts runs at the quiet percent for at
// most one interval.
const (
	quietGCInterval = time.Second
	quietGCAfter    = 10
)

// tuneGC applies defaultGCPercent when GOGC is not set, lowered to
// quietGCPercent while the replica is quiet, for the life of the process.
// The soft memory limit (GOMEMLIMIT, else one below the container's:
// memlimit.go) still bounds the heap from above.
func tuneGC() {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(defaultGCPercent)
		go gctune.NewQuiet(defaultGCPercent, quietGCPercent, quietGCInterval, quietGCAfter).Run(context.Background(), quietGCInterval)
	}
}
