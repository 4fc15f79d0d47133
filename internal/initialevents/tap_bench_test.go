//go:build unix

package initialevents

import (
	"fmt"
	"syscall"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/watch"

	kurzv1alpha1 "github.com/kurz-dev/kurz/api/v1alpha1"
)

// counter is a Sink that only counts, so the benchmark measures the tap.
type counter struct{ n int }

func (c *counter) Upsert(*kurzv1alpha1.Link) { c.n++ }
func (c *counter) Delete(*kurzv1alpha1.Link) { c.n-- }

// BenchmarkTap measures what the tap costs per initial event between the
// watch's decoder and the reflector: 100 000 Links through three sink
// groups (the redirect index, the API's list and find indexes) that only
// count, sent as client-go's StreamWatcher sends them (an unbuffered
// channel, here a FakeWatcher's) to a reader that drops them. Besides the
// wall time it reports the process's CPU time per event: a replica's
// start shares two cores with kube-apiserver, so CPU is what the tap takes
// from the stream.
//
//	go test -run '^$' -bench Tap -benchtime 20x -cpu 2 ./internal/initialevents/
func BenchmarkTap(b *testing.B) {
	const n = 100_000
	links := make([]*kurzv1alpha1.Link, n)
	for i := range links {
		links[i] = link(fmt.Sprint("l", i))
	}
	cpu0 := processCPU(b)
	for b.Loop() {
		f := New[*kurzv1alpha1.Link]()
		for range 3 {
			if err := f.Add(&counter{}); err != nil {
				b.Fatal(err)
			}
		}
		l := newLW()
		w, err := wrap(f, l).WatchWithContext(b.Context(), initialEvents)
		if err != nil {
			b.Fatal(err)
		}
		fake := <-l.watches
		go func() {
			for _, x := range links {
				fake.Add(x)
			}
			fake.Action(watch.Bookmark, endBookmark())
		}()
		for ev := range w.ResultChan() {
			if ev.Type == watch.Bookmark {
				break
			}
		}
		w.Stop()
		if _, ok := f.Fed(); !ok {
			b.Fatal("the stream was not fed")
		}
	}
	events := float64(b.N * n)
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/events, "ns/event")
	b.ReportMetric(float64((processCPU(b)-cpu0).Nanoseconds())/events, "cpu-ns/event")
}

// processCPU is the user and system CPU time this process has used.
func processCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
