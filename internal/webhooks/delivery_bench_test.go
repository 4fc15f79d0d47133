package webhooks

import (
	"fmt"
	"syscall"
	"testing"
	"time"
)

// BenchmarkClickDelivery is what one click costs the replica's CPU from
// Clicked to the receiver's answer: BenchmarkClickPath's work (batching,
// encoding, signing) and the delivery of each batch over a kept-alive
// TLS connection to a receiver in a process of its own (so its CPU is
// not counted), one request at a time as a sender sends them. One op is
// one click. It reports cpu-ns/click, the CPU time of this process
// (getrusage: every goroutine, the HTTP transport's and the garbage
// collector's included) divided by the clicks, by batch size and by
// protocol (HTTP/1.1, or HTTP/2 where the receiver offers it) and by
// batch: 100 clicks (the bound before maxBatchBytes) and a full batch.
// ns/op is wall time and includes waiting for the receiver.
func BenchmarkClickDelivery(b *testing.B) {
	for _, proto := range []string{"h1", "h2"} {
		rcv := StartReceiverProcess(b, -1, proto == "h2")
		for _, size := range []int{100, fullBatch()} {
			b.Run(fmt.Sprintf("%s/batch=%d", proto, size), func(b *testing.B) {
				p := newClickPath(b, false)
				cfg := *p.s.cfg.Load()
				cfg.url = rcv.URL + "/hook"
				cfg.client = newClient(addressPolicy{loopback: true}, nil, rcv.Roots, cfg.timeout)
				defer cfg.client.CloseIdleConnections()
				keys := [][]byte{p.key}
				deliver := func() {
					for len(p.s.q.items) > p.s.q.head {
						dl, _ := p.s.q.pop(p.ctx)
						if o := attempt(p.ctx, &cfg, keys, dl, time.Now()); !o.ok() {
							b.Fatalf("delivery failed: %s", o.lastError)
						}
					}
				}
				// The connection and its TLS session are set up before.
				for i := range size {
					p.ev.Link = p.links[i%len(p.links)]
					p.d.Clicked(&p.ev)
				}
				p.batch()
				deliver()
				b.ReportAllocs()
				cpu := processCPU(b)
				i := 0
				for b.Loop() {
					p.ev.Link = p.links[i%len(p.links)]
					p.d.Clicked(&p.ev)
					i++
					if i%size == 0 {
						p.batch()
						deliver()
					}
				}
				b.ReportMetric(float64((processCPU(b)-cpu).Nanoseconds())/float64(b.N), "cpu-ns/click")
			})
		}
	}
}

// processCPU is the user and system CPU time this process has used.
func processCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
