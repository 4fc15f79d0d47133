//go:build linux

package connpark

import (
	"net"
	"sync/atomic"
	"time"
)

// Every deadline in the package (a waiting or parked connection's timeout
// and linger, a request's read and write deadlines) is an int64 of
// nanoseconds since clockBase, a third of a time.Time's size: they are part
// of every open connection's memory. They are measured on Go's monotonic
// clock: clockBase, from time.Now, carries a monotonic reading, and Since
// and Sub use it. On the wall clock a step (NTP, a resumed VM, date -s)
// would close every parked connection at the next sweep (a step forward)
// or keep them all open for the step's length (backward).
var clockBase = time.Now()

// monoNow is now on the deadline clock.
func monoNow() int64 { return int64(time.Since(clockBase)) }

// monoAt is t on the deadline clock, 0 (none) for the zero time. A t from
// time.Now, as a handler's deadlines are, converts by its monotonic reading.
func monoAt(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	if ns := int64(t.Sub(clockBase)); ns != 0 {
		return ns
	}
	return -1 // the base itself, long past; 0 would mean none
}

// monoTime is the time of a deadline-clock reading, 0 the zero time. It
// keeps a monotonic reading, so a socket deadline set to it is counted on
// the monotonic clock too (the runtime converts it with time.Until).
func monoTime(ns int64) time.Time {
	if ns == 0 {
		return time.Time{}
	}
	return clockBase.Add(time.Duration(ns))
}

// wallOffset is the wall clock's unix nanoseconds at the deadline clock's
// zero, so that one reading of the deadline clock gives a request both its
// start on the wall clock and its duration (RequestStart): a redirect reads
// the clock once, not three times (on this project's virtual machines a
// reading costs 45 ns, time.Now two of them). Every Server's sweep
// refreshes it once a second: a step of the wall clock reaches request
// times within a second, as the sweep's deadlines do.
var wallOffset atomic.Int64

func init() { syncWall() }

// syncWall sets wallOffset from one time.Now, which reads both clocks.
func syncWall() {
	now := time.Now()
	wallOffset.Store(now.UnixNano() - monoAt(now))
}

// A Start is when a request began on a connection Serve serves: the
// deadline clock's reading when its first bytes were read.
type Start struct{ mono int64 }

// RequestStart is the start of the request being served on c (fasthttp's
// RequestCtx.Conn), false for a connection Serve does not serve. Requests
// pipelined behind another, read with it, share its start.
func RequestStart(c net.Conn) (Start, bool) {
	if pc, ok := c.(*conn); ok && pc.start != 0 {
		return Start{pc.start}, true
	}
	return Start{}, false
}

// UnixNano is the start on the wall clock, in unix nanoseconds.
func (s Start) UnixNano() int64 { return s.mono + wallOffset.Load() }

// Elapsed is the time since the start, on the monotonic clock.
func (s Start) Elapsed() time.Duration { return time.Duration(monoNow() - s.mono) }
