package sqlplan

import (
	"testing"
	"time"

	"github.com/kurz-dev/kurz/internal/analytics"
)

// A zone off UTC moves a time series to raw events (its buckets are local
// days) but not a breakdown, which sums its range whatever the zone.
func TestRouteZones(t *testing.T) {
	berlin, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		t.Fatal(err)
	}
	kolkata, err := time.LoadLocation("Asia/Kolkata")
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	ret := Retention{Raw: 90 * 24 * time.Hour, Rollup: 400 * 24 * time.Hour}
	for _, c := range []struct {
		name    string
		groupBy analytics.GroupBy
		loc     *time.Location
		days    int // the range: the last days, from local midnight
		src     analytics.Source
		wantLoc *time.Location
		refused string
	}{
		{"series in UTC", analytics.GroupByTimeseries, time.UTC, 30, analytics.SourceRollups, time.UTC, ""},
		{"series in Berlin", analytics.GroupByTimeseries, berlin, 30, analytics.SourceEvents, berlin, ""},
		{"countries in Berlin", analytics.GroupByCountry, berlin, 30, analytics.SourceRollups, berlin, ""},
		{"top links in Kolkata", analytics.GroupByLink, kolkata, 30, analytics.SourceRollups, kolkata, ""},
		{"series in Berlin beyond raw", analytics.GroupByTimeseries, berlin, 200, analytics.SourceRollups, time.UTC, ""},
		{"series in Kolkata beyond raw", analytics.GroupByTimeseries, kolkata, 200, "", nil, "timezone"},
		{"referrers in Kolkata beyond raw", analytics.GroupByReferrer, kolkata, 200, analytics.SourceRollups, kolkata, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			y, m, d := now.In(c.loc).Date()
			q := analytics.Query{
				Namespace: "team", GroupBy: c.groupBy, Granularity: analytics.Day, Location: c.loc,
				Start: time.Date(y, m, d-c.days, 0, 0, 0, 0, c.loc), End: now,
			}
			p, err := Route(q, now, ret)
			if c.refused != "" {
				qe, ok := analytics.AsQueryError(err)
				if !ok || qe.Param != c.refused {
					t.Fatalf("Route = %v, want a refusal naming %s", err, c.refused)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if p.Src != c.src || p.Loc != c.wantLoc {
				t.Errorf("Route: source %q in %s, want %q in %s", p.Src, p.Loc, c.src, c.wantLoc)
			}
		})
	}
}
