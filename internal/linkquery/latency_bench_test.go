package linkquery

import (
	"slices"
	"testing"
	"time"

	kurzv1alpha1 "github.com/kurz-dev/kurz/api/v1alpha1"
)

// latencyQueries are the queries of GET /api/v1/links that make bench-scale
// measured over 10 ms at p99 (sort=key and sort=-clicks, page 1;
// exclude_tag with sort=updated_at, last page), the default order's page 1
// and a search, each with the page it asks for (and a middle page, far
// from both ends).
var latencyQueries = []latencyQuery{
	{"created/first", Query{}, "first"},
	{"key/first", Query{Sort: Sort{By: ByKey}}, "first"},
	{"-clicks/first", Query{Sort: Sort{By: ByClicks, Reverse: true}}, "first"},
	{"exclude_tag-updated/last", Query{ExcludeTags: []string{"tag3"}, Sort: Sort{By: ByUpdated}}, "last"},
	{"exclude_tag-updated/middle", Query{ExcludeTags: []string{"tag3"}, Sort: Sort{By: ByUpdated}}, "middle"},
	{"search-4/first", Query{Search: "4242"}, "first"},
}

// BenchmarkQueryLatencyInOrder is the same with the records in the order
// of creation, as links created one by one leave them: newest first and
// the last page of oldest first meet the best candidates last in a
// forward scan.
func BenchmarkQueryLatencyInOrder(b *testing.B) {
	links := benchLinkSet()
	slices.SortFunc(links, func(a, b *kurzv1alpha1.Link) int { return createdAt(a).Compare(createdAt(b)) })
	benchQueryLatency(b, loadIndex(links), []latencyQuery{
		{"created_after/first", Query{CreatedAfter: time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)}, "first"},
		{"-created/last", Query{Sort: Sort{By: ByCreated, Reverse: true}}, "last"},
		{"key/first", Query{Sort: Sort{By: ByKey}}, "first"},
	})
}

type latencyQuery struct {
	name string
	q    Query
	page string // first, middle or last
}

// BenchmarkQueryLatency runs each of latencyQueries on 100 000 links and
// reports, beside the mean, the median and the 99th percentile of the
// single queries' wall times: a tail far from the median points at
// allocation (GC) or at the scan's goroutines waiting for a core. Run it
// with a fixed count, e.g. -benchtime=2000x.
func BenchmarkQueryLatency(b *testing.B) {
	benchQueryLatency(b, loadIndex(benchLinkSet()), latencyQueries)
}

func benchQueryLatency(b *testing.B, ix *Index, queries []latencyQuery) {
	for _, bc := range queries {
		_, total := ix.Query("bench", bc.q, 0, 25)
		offset := 0
		switch bc.page {
		case "middle":
			offset = total / 50 * 25
		case "last":
			offset = (total - 1) / 25 * 25
		}
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			lat := make([]time.Duration, 0, b.N)
			cpu := cpuTime()
			for b.Loop() {
				start := time.Now()
				links, n := ix.Query("bench", bc.q, offset, 25)
				lat = append(lat, time.Since(start))
				if n != total || len(links) == 0 {
					b.Fatalf("total %d and %d links, want %d and some", n, len(links), total)
				}
			}
			reportCPU(b, cpu)
			slices.Sort(lat)
			b.ReportMetric(float64(lat[len(lat)/2])/1e6, "p50-ms")
			b.ReportMetric(float64(lat[len(lat)*99/100])/1e6, "p99-ms")
		})
	}
}
