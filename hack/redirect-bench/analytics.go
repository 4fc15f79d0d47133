package main

import (
	"context"
	"fmt"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/kurz-dev/kurz/internal/analytics"
	"github.com/kurz-dev/kurz/internal/analytics/capture"
	"github.com/kurz-dev/kurz/internal/analytics/sqlite"
	"github.com/kurz-dev/kurz/internal/redirect"
)

type benchSalts struct{ s []analytics.DaySalt }

func (b benchSalts) Salts() (uint64, []analytics.DaySalt) { return 1, b.s }

// startAnalytics is --analytics with the SQLite store at path: the same
// ring, consumer and writer as a replica's, with a fixed salt for today and
// tomorrow instead of the Secret; pace false writes batches without the
// pauses between rows (sqlite.Options.PaceWrites), to compare.
func startAnalytics(path string, pace bool) (redirect.AnalyticsCapture, error) {
	so := sqlite.DefaultOptions()
	so.Path = path
	so.PaceWrites = pace
	store, err := sqlite.Open(context.Background(), so)
	if err != nil {
		return redirect.AnalyticsCapture{}, err
	}
	co := capture.DefaultOptions()
	co.WriterID = "bench"
	now := time.Now()
	salts := benchSalts{[]analytics.DaySalt{{Day: now, Salt: analytics.NewSalt()}, {Day: now.Add(24 * time.Hour), Salt: analytics.NewSalt()}}}
	ring := capture.NewRing(co.RingSize)
	c, err := capture.New(co, ring, salts, store)
	if err != nil {
		return redirect.AnalyticsCapture{}, err
	}
	fmt.Printf("analytics memory bound: %d KiB\n", co.MemoryBound()>>10)
	return redirect.AnalyticsCapture{Ring: ring, Consumer: c, CountryHeader: "CF-IPCountry"}, nil
}

// printAnalytics prints the capture's counters (nothing without -analytics).
func printAnalytics() {
	mfs, err := metrics.Registry.Gather()
	if err != nil {
		return
	}
	for _, mf := range mfs {
		switch mf.GetName() {
		case "kurz_analytics_events_total", "kurz_analytics_rows_written_total", "kurz_analytics_clicks_written_total", "kurz_analytics_dropped_clicks_total", "kurz_analytics_write_errors_total":
			sum := 0.0
			for _, m := range mf.GetMetric() {
				sum += m.GetCounter().GetValue()
			}
			fmt.Printf("analytics %s %.0f\n", mf.GetName(), sum)
		}
	}
}
