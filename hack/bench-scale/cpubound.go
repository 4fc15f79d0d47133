package main

import (
	"fmt"
	"os"
	"runtime"
	"strings"
	"time"

	"github.com/kurz-dev/kurz/hack/internal/procstat"
	"github.com/kurz-dev/kurz/internal/devenv"
)

// A start streams every Link from kube-apiserver, which encodes them on the
// same cores kurz decodes them on. On the 2-core machine kube-apiserver
// alone keeps both cores nearly busy while it streams (the floor's reads
// log how busy), so every CPU-second the reader spends lengthens the
// stream by about half a second. cpuMark and cpuSpan measure that beside
// each floor read and each start: the CPU time of kube-apiserver, etcd and
// the reader (bench-scale for a floor, kurz for a start), and the shortest
// time the machine's cores could have done that work in.

// cpuMark is the CPU time used so far by kube-apiserver, etcd and one more
// process, and the machine's busy time, at one moment.
type cpuMark struct {
	at                            time.Time
	apiServer, etcd, reader, busy float64
}

// markCPU reads the CPU time of env's kube-apiserver and etcd and of the
// process reader (none: 0, as for kurz before it starts).
func markCPU(env *devenv.Env, reader int) cpuMark {
	etcdPID, apiPID := env.PIDs()
	m := cpuMark{at: time.Now(), apiServer: procstat.CPUSeconds(apiPID), etcd: procstat.CPUSeconds(etcdPID), busy: machineBusy()}
	if reader > 0 {
		m.reader = procstat.CPUSeconds(reader)
	}
	return m
}

// markSelf is markCPU with bench-scale as the reader.
func markSelf(env *devenv.Env) cpuMark { return markCPU(env, os.Getpid()) }

// cpuSpan is what each used between two marks.
type cpuSpan struct {
	wall                          time.Duration
	apiServer, etcd, reader, busy float64
}

// to is the span from m to later; a reader that started after m (kurz)
// has used nothing at m.
func (m cpuMark) to(later cpuMark) cpuSpan {
	return cpuSpan{wall: later.at.Sub(m.at), apiServer: later.apiServer - m.apiServer, etcd: later.etcd - m.etcd,
		reader: later.reader - m.reader, busy: later.busy - m.busy}
}

// bound is the shortest time the machine's cores could have given the
// three processes the CPU they used.
func (s cpuSpan) bound() time.Duration {
	return time.Duration((s.apiServer + s.etcd + s.reader) / float64(runtime.NumCPU()) * float64(time.Second))
}

// describe gives the three's CPU time, how many of the cores they kept
// busy on average, and the whole machine's.
func (s cpuSpan) describe(reader string) string {
	if s.wall <= 0 {
		return ""
	}
	cores := func(cpu float64) float64 { return cpu / s.wall.Seconds() }
	return fmt.Sprintf("kube-apiserver %.1f, etcd %.1f, %s %.1f CPU-s: %.2f of the %d cores (the machine %.2f)",
		s.apiServer, s.etcd, reader, s.reader, cores(s.apiServer+s.etcd+s.reader), runtime.NumCPU(), cores(s.busy))
}

// cpuBound is what kube-apiserver, etcd and kurz used from the manager's
// start until the last Link redirected, the shortest time the cores could
// have given them that CPU, and the start against it; then how busy the
// floor's reads kept the cores. A start near 1× that bound waited for CPU,
// not for anything else; the reader's CPU is what it can still save.
func (f startFigures) cpuBound() string {
	s := f.cpuUntilServed
	if s.wall <= 0 || s.bound() <= 0 {
		return ""
	}
	out := fmt.Sprintf("%s; the %d cores need at least %s for that: the start took %.2f× that",
		s.describe("kurz"), runtime.NumCPU(), secs(s.bound()), s.wall.Seconds()/s.bound().Seconds())
	if len(f.floorCPU) > 0 {
		busy := make([]string, len(f.floorCPU))
		for i, fs := range f.floorCPU {
			busy[i] = fmt.Sprintf("%.2f", (fs.apiServer+fs.etcd+fs.reader)/fs.wall.Seconds())
		}
		out += fmt.Sprintf("; kube-apiserver, etcd and the floor's reader kept %s of the %d cores busy in the floor's reads",
			strings.Join(busy, ", "), runtime.NumCPU())
		out += f.apiServerAgainstFloor()
	}
	return out
}

// apiServerAgainstFloor compares kube-apiserver's CPU from the manager's
// start to the serve with its mean CPU for one floor read: the same stream
// of the same Links, so about 1× in a start that ran as the floors did
// (0.99–1.09× in stop 51's four million-Link starts). In three of stop
// 52's it was 1.30–2.10×, the starts 1.66–2.75× their floor: the settle
// watcher (startWatcher), idle for more than etcd's 5-minute compaction
// interval, listed every Link again during the start. This names such a
// run in its own output.
func (f startFigures) apiServerAgainstFloor() string {
	var sum float64
	for _, fs := range f.floorCPU {
		sum += fs.apiServer
	}
	if sum <= 0 {
		return ""
	}
	x := f.cpuUntilServed.apiServer / (sum / float64(len(f.floorCPU)))
	out := fmt.Sprintf("; kube-apiserver spent %.2f× its CPU of a floor read", x)
	if x > apiServerSlowRun {
		out += fmt.Sprintf(" (more than %.1f×: kube-apiserver ran slower than while the floor was read)", apiServerSlowRun)
	}
	return out
}

// apiServerSlowRun is the ratio of kube-apiserver's CPU in a start to a
// floor read's past which a start is flagged: between the 1.09× of the
// usual starts and the 1.30× of the least slow of the others.
const apiServerSlowRun = 1.2
