package sqlite

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/kurz-dev/kurz/internal/analytics"
	"github.com/kurz-dev/kurz/internal/analytics/storetest"
	"github.com/kurz-dev/kurz/internal/analytics/synth"
)

// BenchmarkWrite is the writer's cost per row: batches of 5 000 generated
// rows (1 000 links) written one transaction each. make bench-analytics
// measures the same at 10 million clicks.
func BenchmarkWrite(b *testing.B) {
	gen := synth.New(synth.Config{Links: 1000, Clicks: 200000, Days: 2, Start: day0, Seed: 9})
	var batches []analytics.Batch
	a := analytics.NewAggregator(5000)
	for d := range 2 {
		gen.Day(d, func(e *analytics.Event) {
			a.Add(*e)
			if a.Len() == 5000 {
				batches = append(batches, a.Take(""))
			}
		})
	}
	s := openTest(b, testOptions(b), day0)
	b.ResetTimer()
	rows := 0
	for i := 0; b.Loop(); i++ {
		bt := batches[i%len(batches)]
		bt.ID = fmt.Sprintf("bench-%d", i)
		if err := s.Write(context.Background(), bt); err != nil {
			b.Fatal(err)
		}
		rows += len(bt.Events)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(rows), "ns/row")
}

// BenchmarkQuery is one link's 30-day top-10 countries and the workspace's
// top links, from rollups, on 300 000 clicks.
func BenchmarkQuery(b *testing.B) {
	gen := synth.New(synth.Config{Links: 1000, Clicks: 300000, Days: 31, Start: day0, Seed: 9})
	now := day0.AddDate(0, 0, 31).Add(time.Hour)
	s := openTest(b, testOptions(b), now)
	storetest.Load(b, s, gen, 31)
	if err := s.Maintain(context.Background(), now); err != nil {
		b.Fatal(err)
	}
	hot := gen.Links()[gen.Hottest()]
	for _, q := range []struct {
		name string
		q    analytics.Query
	}{
		{"hottest link 30d countries", analytics.Query{Namespace: hot.Namespace, Links: []string{hot.UID}, GroupBy: analytics.GroupByCountry, Granularity: analytics.Day, Start: day0.AddDate(0, 0, 1), End: now, ExcludeBots: true, Limit: 10}},
		{"hottest link 30d countries raw", analytics.Query{Namespace: hot.Namespace, Links: []string{hot.UID}, GroupBy: analytics.GroupByCountry, Granularity: analytics.Day, Start: day0.AddDate(0, 0, 1), End: now, ExcludeBots: true, Limit: 10, Source: analytics.SourceEvents}},
		{"workspace 30d top links", analytics.Query{Namespace: hot.Namespace, GroupBy: analytics.GroupByLink, Granularity: analytics.Day, Start: day0.AddDate(0, 0, 1), End: now, ExcludeBots: true, Limit: 10}},
	} {
		b.Run(q.name, func(b *testing.B) {
			for b.Loop() {
				if _, err := s.Query(context.Background(), q.q); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
