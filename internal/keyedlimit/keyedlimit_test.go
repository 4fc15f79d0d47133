package keyedlimit

import (
	"sync"
	"testing"
	"time"

	"golang.org/x/time/rate"
)

var t0 = time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)

func TestBurstThenRefill(t *testing.T) {
	l := PerMinute(3, 10)
	for i, want := range []int{2, 1, 0} {
		ok, remaining, _ := l.Take("a", 1, t0)
		if !ok || remaining != want {
			t.Fatalf("take %d: ok=%v remaining=%d, want true, %d", i+1, ok, remaining, want)
		}
	}
	ok, _, wait := l.Take("a", 1, t0)
	if ok || wait != 20*time.Second {
		t.Fatalf("fourth take: ok=%v wait=%s, want refused and 20s (3 a minute)", ok, wait)
	}
	if ok, _, _ := l.Take("b", 1, t0); !ok {
		t.Fatal("another key shares the first key's bucket")
	}
	if ok, _, _ := l.Take("a", 1, t0.Add(20*time.Second)); !ok {
		t.Fatal("a token was not refilled after 20s")
	}
}

// All or none: a take of more than is left takes nothing.
func TestTakeNAllOrNone(t *testing.T) {
	l := New(rate.Every(time.Second), 5, 10)
	if ok, _, _ := l.Take("k", 3, t0); !ok {
		t.Fatal("3 of 5 refused")
	}
	ok, _, wait := l.Take("k", 3, t0)
	if ok || wait != time.Second {
		t.Fatalf("3 of the 2 left: ok=%v wait=%s, want refused and 1s", ok, wait)
	}
	if ok, remaining, _ := l.Take("k", 2, t0); !ok || remaining != 0 {
		t.Fatalf("the 2 left: ok=%v remaining=%d; a refused take must take nothing", ok, remaining)
	}
}

// A key pushed out of the cache comes back with a full bucket.
func TestForgottenKeyIsFull(t *testing.T) {
	l := New(rate.Every(time.Hour), 1, 1)
	l.Take("a", 1, t0)
	l.Take("b", 1, t0) // pushes a out
	if ok, _, _ := l.Take("a", 1, t0); !ok {
		t.Fatal("a forgotten key kept its empty bucket")
	}
}

// Concurrent first takes of one key share one bucket: never more than the
// burst is taken.
func TestConcurrentFirstTakesShareABucket(t *testing.T) {
	for range 50 {
		l := New(rate.Every(time.Hour), 5, 100)
		var wg sync.WaitGroup
		var mu sync.Mutex
		taken := 0
		for range 20 {
			wg.Go(func() {
				if ok, _, _ := l.Take("k", 1, t0); ok {
					mu.Lock()
					taken++
					mu.Unlock()
				}
			})
		}
		wg.Wait()
		if taken != 5 {
			t.Fatalf("%d taken from a bucket of 5", taken)
		}
	}
}
