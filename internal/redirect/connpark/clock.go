//go:build linux

package connpark

import "time"

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
