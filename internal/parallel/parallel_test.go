package parallel

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"

	. "github.com/onsi/gomega"
)

func TestEachCoversTheRangeOnce(t *testing.T) {
	g := NewWithT(t)
	var mu sync.Mutex
	seen := map[int]int{}
	g.Expect(Each(context.Background(), 3, 1000, 7, func(i int) error {
		mu.Lock()
		defer mu.Unlock()
		seen[i]++
		return nil
	})).To(Succeed())
	g.Expect(seen).To(HaveLen(997))
	for i := 3; i < 1000; i++ {
		g.Expect(seen[i]).To(Equal(1), "index %d", i)
	}
}

func TestBatchesSplitTheRange(t *testing.T) {
	g := NewWithT(t)
	var mu sync.Mutex
	var got [][2]int
	g.Expect(Batches(context.Background(), 0, 10, 4, 2, func(lo, hi int) error {
		mu.Lock()
		defer mu.Unlock()
		got = append(got, [2]int{lo, hi})
		return nil
	})).To(Succeed())
	g.Expect(got).To(ConsistOf([2]int{0, 4}, [2]int{4, 8}, [2]int{8, 10}))
}

func TestFirstErrorStopsTheWorkers(t *testing.T) {
	g := NewWithT(t)
	boom := errors.New("boom")
	var calls atomic.Int64
	err := Each(context.Background(), 0, 1_000_000, 4, func(i int) error {
		calls.Add(1)
		if i == 10 {
			return boom
		}
		return nil
	})
	g.Expect(err).To(MatchError(boom))
	g.Expect(calls.Load()).To(BeNumerically("<", 1_000_000), "no worker starts an index after the error")
}

func TestCancelledContextStartsNothing(t *testing.T) {
	g := NewWithT(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var calls atomic.Int64
	err := Each(ctx, 0, 100, 4, func(int) error { calls.Add(1); return nil })
	g.Expect(err).To(MatchError(context.Canceled))
	g.Expect(calls.Load()).To(BeZero())
}
