package webhooks

import (
	"fmt"
	"net/netip"
	"syscall"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"

	"github.com/kurz-dev/kurz/internal/analytics"
	"github.com/kurz-dev/kurz/internal/analytics/capture"
)

// ringLink is a capture.Link as the redirect's Entry is one, with the
// destination the redirect records with each of its clicks.
type ringLink struct {
	ref  analytics.LinkRef
	dest string
}

func (l *ringLink) AnalyticsRef() analytics.LinkRef { return l.ref }

// BenchmarkRingToBatch is what one click costs a replica without
// analytics between the redirect's ring slot and its batch's signed body,
// as make bench-webhooks' redirect figure wires it: the redirect fills
// the capture's ring (as the handler does), the on-demand capture's
// consumer drains it into the dispatcher, which batches the clicks of
// 10 000 Links for one Webhook of every Link (100 clicks a request, the
// default) and each full batch is signed. One op is one click.
//
//	go test -run '^$' -bench RingToBatch -benchmem ./internal/webhooks/
func BenchmarkRingToBatch(b *testing.B) {
	p := newClickPath(b, false)
	p.s.cfg.Load().maxClicks = defaultMaxClicks
	o := capture.DefaultOptions()
	o.WriterID = "bench"
	ring := capture.NewRing(o.RingSize)
	c, err := capture.NewWithOutputs(o, ring, noSalts{}, nil, p.d)
	if err != nil {
		b.Fatal(err)
	}
	links := make([]*ringLink, 10000)
	for i := range links {
		links[i] = &ringLink{
			ref: analytics.LinkRef{UID: string(types.UID(fmt.Sprintf("6f1c2a84-5b0e-4d4b-9a51-%012d", i))), Namespace: "team",
				Name: fmt.Sprintf("l%d", i), Domain: "go.example.com", Key: fmt.Sprintf("k%d", i)},
			dest: fmt.Sprintf("https://www.example.com/products/item-%d?ref=short", i),
		}
	}
	now := time.Now()
	ip := netip.MustParseAddr("192.0.2.1")
	ua := []byte("Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36")
	ref := []byte("https://news.example.com/today")
	b.ReportAllocs()
	faults := ringMinorFaults(b)
	i := 0
	for b.Loop() {
		k, v, _ := ring.Reserve()
		l := links[i%len(links)]
		k.Time, k.Link, k.IP = now, l, ip
		k.Dest, k.DestUTM = l.dest, ""
		k.SetText(ua, ref, nil)
		k.SetCountry(nil)
		ring.Commit(v)
		i++
		if ring.Len() >= ring.Cap() {
			c.Drain()
			p.sign(b)
		}
	}
	// A first touch of a page costs this VM about 30 µs (docs/webhooks.md).
	b.ReportMetric(float64(ringMinorFaults(b)-faults)/float64(b.N), "faults/click")
}

// ringMinorFaults is how many minor page faults this process has taken.
func ringMinorFaults(b *testing.B) int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return ru.Minflt
}

// noSalts: the on-demand capture hashes no visitor.
type noSalts struct{}

func (noSalts) Salts() (uint64, []analytics.DaySalt) { return 0, nil }

// BenchmarkFirstTouch is what a minor page fault costs: one op is the
// first write to a page of fresh anonymous memory (the fault, the kernel's
// zeroing, and in a VM the host's work), the cost of every fresh page a
// batch's buffer or the heap's growth touches. Compare faults/click above.
//
//	go test -run '^$' -bench FirstTouch -cpu 1 ./internal/webhooks/
func BenchmarkFirstTouch(b *testing.B) {
	const pages = 4096
	page := syscall.Getpagesize()
	var mem []byte
	n := 0
	for b.Loop() {
		if n%pages == 0 {
			b.StopTimer()
			if mem != nil {
				if err := syscall.Munmap(mem); err != nil {
					b.Fatal(err)
				}
			}
			m, err := syscall.Mmap(-1, 0, pages*page, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
			if err != nil {
				b.Fatal(err)
			}
			mem = m
			b.StartTimer()
		}
		mem[(n%pages)*page] = 1
		n++
	}
	if mem != nil {
		_ = syscall.Munmap(mem)
	}
}
