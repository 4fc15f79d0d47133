// Package parallel runs one step over a range of indexes from a fixed number
// of goroutines: what the load generators and benchmark setups share when
// they create many objects or open many connections at once.
package parallel

import (
	"context"
	"sync"
	"sync/atomic"
)

// Each calls do(i) for every i in [from, to) from workers goroutines, each
// taking the next index when it is done with one. See Batches for errors
// and cancellation.
func Each(ctx context.Context, from, to, workers int, do func(i int) error) error {
	return Batches(ctx, from, to, 1, workers, func(lo, _ int) error { return do(lo) })
}

// Batches calls do(lo, hi) for consecutive batches [lo, hi) of at most
// size indexes covering [from, to), from workers goroutines. The first
// error stops every worker from starting another batch and is returned;
// so does the end of ctx (ctx.Err()). Batches that have started finish.
func Batches(ctx context.Context, from, to, size, workers int, do func(lo, hi int) error) error {
	stop, cancel := context.WithCancel(ctx)
	defer cancel()
	var next atomic.Int64
	next.Store(int64(from))
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for range workers {
		wg.Go(func() {
			for stop.Err() == nil {
				lo := int(next.Add(int64(size)) - int64(size))
				if lo >= to {
					return
				}
				if err := do(lo, min(lo+size, to)); err != nil {
					errs <- err
					cancel()
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		return err
	}
	return ctx.Err()
}
