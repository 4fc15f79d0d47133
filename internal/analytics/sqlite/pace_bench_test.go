package sqlite

import (
	"context"
	"fmt"
	"io"
	"net"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/kurz-dev/kurz/internal/analytics"
	"github.com/kurz-dev/kurz/internal/analytics/synth"
)

// BenchmarkWriteBesideRequests is what a minute's batch write does to
// requests served on the same processor (GOMAXPROCS 1, as on
// hack/bench-redirect.sh's pinned core): a loopback client sends a byte and
// waits for its echo, again and again, while the store writes batches of
// 10 000 rows, with and without the pauses between rows. It reports the
// round trips' p99 and max and the batch's wall time.
// go test -run '^$' -bench WriteBesideRequests -benchtime 3x ./internal/analytics/sqlite/
func BenchmarkWriteBesideRequests(b *testing.B) {
	gen := synth.New(synth.Config{Links: 10000, Clicks: 30000, Days: 1, Start: day0, Seed: 9})
	var batches []analytics.Batch
	a := analytics.NewAggregator(10000)
	gen.Day(0, func(e *analytics.Event) {
		a.Add(*e)
		if a.Len() == 10000 {
			batches = append(batches, a.Take(""))
		}
	})
	for _, pace := range []bool{false, true} {
		b.Run(fmt.Sprintf("pace=%v", pace), func(b *testing.B) {
			defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
			o := testOptions(b)
			o.PaceWrites = pace
			s := openTest(b, o, day0)
			stop := echoLoad(b)
			var wall time.Duration
			for i := 0; b.Loop(); i++ {
				bt := batches[i%len(batches)]
				bt.ID = fmt.Sprintf("bench-%d", i)
				start := time.Now()
				if err := s.Write(context.Background(), bt); err != nil {
					b.Fatal(err)
				}
				wall += time.Since(start)
			}
			d := stop()
			slices.Sort(d)
			if len(d) == 0 {
				b.Fatal("no round trips")
			}
			b.ReportMetric(float64(d[len(d)*99/100].Microseconds()), "p99-µs")
			b.ReportMetric(float64(d[len(d)-1].Microseconds()), "max-µs")
			b.ReportMetric(float64(wall.Milliseconds())/float64(b.N), "write-ms")
		})
	}
}

// echoLoad runs a loopback echo server and a client timing round trips of
// one byte until stop, which returns the round trips.
func echoLoad(b *testing.B) func() []time.Duration {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		_, _ = io.Copy(c, c)
	}()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		b.Fatal(err)
	}
	var rtts []time.Duration
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		buf := []byte{1}
		for {
			select {
			case <-done:
				return
			default:
			}
			start := time.Now()
			if _, err := c.Write(buf); err != nil {
				return
			}
			if _, err := io.ReadFull(c, buf); err != nil {
				return
			}
			rtts = append(rtts, time.Since(start))
		}
	}()
	return func() []time.Duration {
		close(done)
		<-finished
		_ = c.Close()
		_ = ln.Close()
		return rtts
	}
}
