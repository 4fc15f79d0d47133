package main

import (
	"fmt"
	"math"
	"os"
	"os/signal"
	"runtime/metrics"
	"syscall"
	"time"
)

// runtimeStats are the Go runtime's figures that say where a redirect's
// time goes when the server is busy with something else: how long runnable
// goroutines waited for a P (a processor of GOMAXPROCS), and how long the
// world stood still for the garbage collector, in all and while stopping
// it (waiting for every P's goroutine to reach a safe point).
var runtimeStats = []string{
	"/sched/latencies:seconds",
	"/sched/pauses/total/gc:seconds",
	"/sched/pauses/stopping/gc:seconds",
	"/gc/cycles/total:gc-cycles",
}

// reportRuntimeOnSignal prints, on each SIGUSR2, the runtime's figures since
// the previous one: the load generator signals the server at the start and
// end of each measured phase.
func reportRuntimeOnSignal() {
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, syscall.SIGUSR2)
	samples := make([]metrics.Sample, len(runtimeStats))
	for i, name := range runtimeStats {
		samples[i].Name = name
	}
	metrics.Read(samples)
	prev := snapshot(samples)
	for range ch {
		metrics.Read(samples)
		cur := snapshot(samples)
		lat := diff(cur[0], prev[0])
		pause := diff(cur[1], prev[1])
		stop := diff(cur[2], prev[2])
		fmt.Printf("server runtime: %d GCs; world stopped %d times, p99 %v max %v (stopping: max %v); goroutines waited for a P: p99 %v, max %v, of %d\n",
			cur[3].n-prev[3].n, pause.count(), pause.quantile(.99), pause.quantile(1), stop.quantile(1),
			lat.quantile(.99), lat.quantile(1), lat.count())
		prev = cur
	}
}

type stat struct {
	n       uint64
	counts  []uint64
	buckets []float64
}

func snapshot(samples []metrics.Sample) []stat {
	out := make([]stat, len(samples))
	for i, s := range samples {
		switch s.Value.Kind() {
		case metrics.KindUint64:
			out[i].n = s.Value.Uint64()
		case metrics.KindFloat64Histogram:
			h := s.Value.Float64Histogram()
			out[i].counts = append([]uint64(nil), h.Counts...)
			out[i].buckets = h.Buckets
		}
	}
	return out
}

func diff(cur, prev stat) stat {
	d := stat{buckets: cur.buckets, counts: make([]uint64, len(cur.counts))}
	for i := range cur.counts {
		d.counts[i] = cur.counts[i] - prev.counts[i]
	}
	return d
}

func (s stat) count() uint64 {
	var n uint64
	for _, c := range s.counts {
		n += c
	}
	return n
}

// quantile is the upper bound of the bucket holding quantile q (1: the
// largest sample's bucket).
func (s stat) quantile(q float64) time.Duration {
	total := s.count()
	if total == 0 {
		return 0
	}
	want := uint64(math.Ceil(q * float64(total)))
	var seen uint64
	for i, c := range s.counts {
		seen += c
		if seen >= want && c > 0 {
			upper := s.buckets[i+1]
			if math.IsInf(upper, 1) {
				upper = s.buckets[i]
			}
			return time.Duration(upper * float64(time.Second))
		}
	}
	return 0
}
