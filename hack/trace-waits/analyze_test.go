package main

import (
	"bytes"
	"runtime"
	"runtime/trace"
	"testing"
	"time"
)

// spinner wakes the goroutine waiting on woken, then keeps its processor
// for d without a call that could yield it, then closes spun.
//
//go:noinline
func spinner(woken, spun chan struct{}, d time.Duration) {
	close(woken)
	for start := time.Now(); time.Since(start) < d; {
	}
	close(spun)
}

// waiter waits for woken, then closes done.
//
//go:noinline
func waiter(woken, done chan struct{}) {
	<-woken
	close(done)
}

// With one processor, a goroutine made runnable by one that then spins
// waits until the runtime preempts the spinner (after a few ms): the
// analysis must find that wait and name the spinner as what ran.
func TestAnalyzeFindsWhoHeldTheProcessor(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	var buf bytes.Buffer
	if err := trace.Start(&buf); err != nil {
		t.Fatal(err)
	}
	woken, done, spun := make(chan struct{}), make(chan struct{}), make(chan struct{})
	go waiter(woken, done)
	go spinner(woken, spun, 50*time.Millisecond)
	<-done
	<-spun // every goroutine's events are written before the trace stops
	trace.Stop()

	const least = 500 * time.Microsecond
	a, err := analyze(&buf, least)
	if err != nil {
		t.Fatal(err)
	}
	const pkg = "github.com/kurz-dev/kurz/hack/trace-waits."
	for _, w := range a.waits {
		if w.entry == pkg+"waiter" && w.held[pkg+"spinner"] >= time.Duration(w.to-w.from)/2 {
			return
		}
	}
	var out bytes.Buffer
	a.print(&out)
	t.Fatalf("no wait of the waiter of %s or more, held by the spinner:\n%s", least, out.String())
}
