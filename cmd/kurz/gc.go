package main

import (
	"os"
	"runtime/debug"
)

// defaultGCPercent is kurz's GOGC unless the environment sets one. Every
// replica holds every Link in memory and the redirect path allocates
// nothing, so most of the heap is long-lived: at 50 the heap grows to 1.5x
// the live objects between collections instead of Go's 2x, which is most of
// a replica's memory per link at scale (docs/scaling.md), for GC
// cycles that cost little once the caches are filled.
const defaultGCPercent = 50

// tuneGC applies defaultGCPercent when GOGC is not set. The soft memory
// limit (GOMEMLIMIT, else one below the container's: memlimit.go) still
// bounds the heap from above.
func tuneGC() {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(defaultGCPercent)
	}
}
