package redirect

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/kurz-dev/kurz/internal/analytics"
	"github.com/kurz-dev/kurz/internal/analytics/capture"
)

type discardBatches struct{}

func (discardBatches) Write(context.Context, analytics.Batch) error { return nil }
func (discardBatches) Close() error                                 { return nil }

// BenchmarkRedirectAnalytics is what click analytics adds to a redirect on
// one core, as hack/bench-redirect.sh sends them (a browser's request, a
// random one of 10 000 links) but without the network, the HTTP parse or
// the store: the handler alone, with analytics off and on; on, the
// consumer drains the full ring on the same goroutine, so its enrichment
// and aggregation are counted per request too. The difference of the two
// is the analytics CPU per click without writing:
// go test -run '^$' -bench RedirectAnalytics -cpu 1 ./internal/redirect/
func BenchmarkRedirectAnalytics(b *testing.B) {
	const links = 10000
	h := hotPathHandler()
	keys := make([]string, links)
	for i := range keys {
		keys[i] = fmt.Sprint("/k", i)
		h.ix.UpsertLink(testLink("ns", fmt.Sprint("l", i), "go.test", keys[i][1:], i))
	}
	for _, on := range []bool{false, true} {
		b.Run(fmt.Sprintf("analytics=%v", on), func(b *testing.B) {
			h.analytics = nil
			var consumer *capture.Consumer
			if on {
				co := capture.DefaultOptions()
				co.WriterID = "bench"
				h.analytics = capture.NewRing(co.RingSize)
				var err error
				consumer, err = capture.New(co, h.analytics, oneSalt{[]analytics.DaySalt{{Day: time.Now(), Salt: analytics.NewSalt()}}}, discardBatches{})
				if err != nil {
					b.Fatal(err)
				}
				_ = consumer.Replay(context.Background())
				defer func() { _ = consumer.Finish(context.Background()) }()
			}
			var ctx fasthttp.RequestCtx
			hotPathRequest(&ctx, "GET", "go.test", keys[0], browserUA)
			h.serve(&ctx)
			if loc := string(ctx.Response.Header.Peek("Location")); loc != "https://dest.example/ns/l0" {
				b.Fatalf("%s redirects to %q", keys[0], loc)
			}
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				ctx.Request.SetRequestURI(keys[i])
				i = (i + 7919) % links // every key, far from the last
				ctx.Response.Reset()
				h.serve(&ctx)
				if on && h.analytics.Len() == h.analytics.Cap() {
					consumer.Drain()
				}
			}
			if on && h.analytics.Dropped() > 0 {
				b.Fatalf("%d clicks dropped", h.analytics.Dropped())
			}
		})
	}
}
