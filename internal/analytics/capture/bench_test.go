package capture

import (
	"context"
	"fmt"
	"net/netip"
	"testing"
	"time"

	"github.com/go-logr/logr"

	"github.com/kurz-dev/kurz/internal/analytics"
)

type discardWriter struct{ rows int }

func (d *discardWriter) Write(_ context.Context, b analytics.Batch) error {
	d.rows += len(b.Events)
	return nil
}
func (d *discardWriter) Close() error { return nil }

// BenchmarkConsumer is the analytics CPU per click off the redirect path
// without the store: ring, enrichment (cached User-Agent class, visitor
// hash, referrer host, UTM merge), aggregation and batching, for clicks
// spread over 10 000 links as hack/bench-redirect.sh sends them.
// go test -run '^$' -bench Consumer -benchmem ./internal/analytics/capture/
func BenchmarkConsumer(b *testing.B) {
	o := DefaultOptions()
	o.WriterID = "bench"
	ring := NewRing(o.RingSize)
	w := &discardWriter{}
	now := time.Now()
	c, err := New(o, ring, fixedSalts{[]analytics.DaySalt{{Day: now, Salt: analytics.NewSalt()}}}, w)
	if err != nil {
		b.Fatal(err)
	}
	c.store.log = logr.Discard()
	_ = c.Replay(context.Background())
	links := make([]*testLink, 10000)
	for i := range links {
		links[i] = &testLink{
			ref:  analytics.LinkRef{UID: fmt.Sprint(i), Namespace: "bench", Name: fmt.Sprint("link-", i), Domain: "bench.kurz.test", Key: fmt.Sprint("k", i)},
			dest: fmt.Sprintf("https://www.example.com/products/item-%d?ref=short&utm_source=kurz&utm_medium=link&utm_campaign=bench", i),
		}
	}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		put(ring, links[i%len(links)], now, "192.0.2.1", desktopUA, "https://news.example.com/today", "", "DE")
		i++
		if ring.Len() >= ring.Cap() {
			c.Drain()
		}
	}
	c.Drain()
	_ = c.Finish(context.Background())
	b.ReportMetric(float64(w.rows)/float64(b.N), "rows/click")
}

type countSink struct{ n int }

func (s *countSink) Clicked(*analytics.Event) { s.n++ }

// BenchmarkConsumerSinkOnly is the capture's CPU per click when its only
// taker is a sink (webhooks' link.clicked without analytics: no store, no
// visitor salts): ring, enrichment, the sink's call.
func BenchmarkConsumerSinkOnly(b *testing.B) {
	c, ring, sink, links := sinkConsumer(b, DefaultOptions().RingSize)
	now := time.Now()
	ip := netip.MustParseAddr("192.0.2.1")
	ua, ref := []byte(desktopUA), []byte("https://news.example.com/today")
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		benchClick(ring, now, links[i%len(links)], ip, ua, ref)
		i++
		if ring.Len() >= ring.Cap() {
			c.Drain()
		}
	}
	c.Drain()
	if sink.n != b.N {
		b.Fatalf("the sink got %d clicks of %d", sink.n, b.N)
	}
}

// sinkConsumer is a consumer of a ring of slots whose only taker is a
// counting sink, and 10 000 Links to click.
func sinkConsumer(b *testing.B, slots int) (*Consumer, *Ring, *countSink, []*testLink) {
	b.Helper()
	o := DefaultOptions()
	o.WriterID = "bench"
	ring := NewRing(slots)
	sink := &countSink{}
	c, err := NewWithOutputs(o, ring, fixedSalts{}, nil, sink)
	if err != nil {
		b.Fatal(err)
	}
	links := make([]*testLink, 10000)
	for i := range links {
		links[i] = &testLink{
			ref:  analytics.LinkRef{UID: fmt.Sprint(i), Namespace: "bench", Name: fmt.Sprint("link-", i), Domain: "bench.kurz.test", Key: fmt.Sprint("k", i)},
			dest: fmt.Sprintf("https://www.example.com/products/item-%d?ref=short&utm_source=kurz&utm_medium=link&utm_campaign=bench", i),
		}
	}
	return c, ring, sink, links
}

// benchClick writes a click into the ring as the redirect handler does,
// and reports whether the ring had room.
func benchClick(ring *Ring, now time.Time, l *testLink, ip netip.Addr, ua, ref []byte) bool {
	k, v, ok := ring.Reserve()
	if !ok {
		return false
	}
	k.Time, k.Link, k.IP = now, l, ip
	k.Dest, k.DestUTM = l.dest, ""
	k.SetText(ua, ref, nil)
	k.SetCountry(nil)
	ring.Commit(v)
	return true
}
