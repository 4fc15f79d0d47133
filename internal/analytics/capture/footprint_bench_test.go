package capture

import (
	"fmt"
	"net/netip"
	"runtime"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"golang.org/x/sys/unix"
	ctrl "sigs.k8s.io/controller-runtime"
)

// pin locks the calling goroutine to its thread and the thread to cpu;
// unpin gives the thread its CPUs back before it returns to the runtime.
func pin(cpu int) (unpin func(), err error) {
	runtime.LockOSThread()
	var was, set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &was); err != nil {
		runtime.UnlockOSThread()
		return nil, err
	}
	set.Set(cpu)
	if err := unix.SchedSetaffinity(0, &set); err != nil {
		runtime.UnlockOSThread()
		return nil, err
	}
	return func() {
		_ = unix.SchedSetaffinity(0, &was)
		runtime.UnlockOSThread()
	}, nil
}

// threadCPU is the CPU time the calling thread has used: what the drain
// costs, without the time other processes of the machine took the CPU.
func threadCPU(b *testing.B) time.Duration {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ts.Nano())
}

// BenchmarkConsumerFootprint asks whether the consumer's cost a click
// depends on where the click's slot and its Link's table entry are in the
// caches when the consumer first reads them (docs/webhooks.md, the redirect
// throughput figure). The redirect (a goroutine pinned to CPU 0) fills 500
// clicks of 10 000 Links, touching pollute bytes of other memory after
// each (a redirect's own working set: 256 KiB a click leaves nothing of the
// slots in any cache), then the consumer drains them, as it does every
// 20 ms at 25 000 clicks a second: pinned to CPU 1, or to CPU 0 with
// same=true (make bench-webhooks pins the replica to one CPU). Only the
// drain is timed, in its thread's CPU time: drain-ns/click is the
// consumer's cost a click. slots varies the ring's footprint: 4 096 slots
// (the default, 4.5 MB) against 512.
//
//	go test -run '^$' -bench ConsumerFootprint -benchtime 300x ./internal/analytics/capture/
func BenchmarkConsumerFootprint(b *testing.B) {
	if runtime.NumCPU() < 2 {
		b.Skip("needs two CPUs")
	}
	for _, slots := range []int{4096, 512} {
		for _, pollute := range []int{0, 32 << 10, 256 << 10} {
			for _, same := range []bool{false, true} {
				name := fmt.Sprintf("slots=%d/pollute=%d/same=%v", slots, pollute, same)
				b.Run(name, func(b *testing.B) { benchFootprint(b, slots, pollute, same) })
			}
		}
	}
}

func benchFootprint(b *testing.B, slots, pollute int, same bool) {
	const drain = 500
	c, ring, _, links := sinkConsumer(b, slots)
	now := time.Now()
	ip := netip.MustParseAddr("192.0.2.1")
	ua, ref := []byte(desktopUA), []byte("https://news.example.com/today")
	scratch := make([]byte, 256<<20)
	fill, filled := make(chan bool), make(chan struct{})
	cpu := 1
	if same {
		cpu = 0
	}
	unpin, err := pin(cpu)
	if err != nil {
		b.Skip("cannot pin threads: ", err)
	}
	defer unpin()
	ctrl.SetLogger(logr.Discard())
	go func() {
		unpin, err := pin(0) // CPU 0 exists: the consumer's pin worked
		if err != nil {
			panic(err)
		}
		defer unpin()
		i, at := 0, 0
		for range fill {
			for range drain {
				if !benchClick(ring, now, links[(i*7919)%len(links)], ip, ua, ref) {
					panic("ring full")
				}
				i++
				for j := 0; j < pollute; j += 64 {
					scratch[at]++
					at = (at + 64) % len(scratch)
				}
			}
			filled <- struct{}{}
		}
	}()
	defer close(fill)
	// A first pass over every Link: the tables hold them all, as in a
	// replica that has run for a while.
	for range len(links)/drain + 1 {
		fill <- true
		<-filled
		c.Drain()
	}
	var spent time.Duration
	b.ResetTimer()
	for range b.N {
		fill <- true
		<-filled
		t := threadCPU(b)
		c.Drain()
		spent += threadCPU(b) - t
	}
	b.StopTimer()
	b.ReportMetric(float64(spent.Nanoseconds())/float64(b.N*drain), "drain-ns/click")
}
