package main

import (
	"context"
	"os"
	"runtime/debug"
	"time"

	ctrlmanager "sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/kurz-dev/kurz/internal/gctune"
)

// defaultGCPercent is kurz's GOGC unless the environment sets one. Every
// replica holds every Link in memory and the redirect path allocates
// nothing, so most of the heap is long-lived: at 50 the heap grows to 1.5x
// the live objects between collections instead of Go's 2x, which is most of
// a replica's memory per link at scale (docs/scaling.md), for GC
// cycles that cost little once the caches are filled.
const defaultGCPercent = 50

// quietGCPercent is the percent while the replica allocates next to
// nothing (settled and idle: a few KB a second). On lowering it gctune
// returns every free page to the OS, so a settled replica gives back what
// its start and settle grew to: at 100 000 Links, 255 MiB of RSS once
// quiet against 318 MiB at the settle (2.67 against 3.3 KB a link;
// docs/scaling.md, "A lower GC percent while the replica is quiet").
// gctune bounds its cost: at most one collection per gctune.MinPeriod
// while quiet, and the first second of work raises the percent back.
const quietGCPercent = 10

// tuneGC applies defaultGCPercent when GOGC is not set and returns the
// Quiet that lowers it to quietGCPercent while the process is quiet, for
// the manager to run (gcTuner); nil when GOGC is set: the operator chose.
// The soft memory limit (GOMEMLIMIT, else one below the container's:
// memlimit.go) still bounds the heap from above.
func tuneGC() *gctune.Quiet {
	if os.Getenv("GOGC") != "" {
		return nil
	}
	debug.SetGCPercent(defaultGCPercent)
	// Checked every second; ten quiet seconds in a row lower it, so a
	// pause between two requests of a busy replica does not.
	return gctune.NewQuiet(defaultGCPercent, quietGCPercent, time.Second, 10)
}

// gcTuner runs a Quiet as a manager runnable. It needs no leader, so
// controller-runtime starts it with the servers, once the caches have
// synced: a start whose stream stalls (kube-apiserver slow) allocates
// little for seconds while it is still filling its heap, and the tuner
// would take that for a quiet replica, lower the percent and return the
// free pages, which the stream then faults back in (a million-Link start
// in docs/scaling.md: two collections forced mid-start).
type gcTuner struct{ q *gctune.Quiet }

func (t gcTuner) Start(ctx context.Context) error {
	t.q.Run(ctx, time.Second)
	return nil
}

func (gcTuner) NeedLeaderElection() bool { return false }

// addGCTuner adds q's runnable to m, when there is a q.
func addGCTuner(m interface {
	Add(ctrlmanager.Runnable) error
}, q *gctune.Quiet) error {
	if q == nil {
		return nil
	}
	return m.Add(gcTuner{q})
}
