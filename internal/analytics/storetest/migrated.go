package storetest

import (
	"context"
	"testing"
	"time"

	. "github.com/onsi/gomega" //nolint:staticcheck // ST1001: as in suite.go

	"github.com/kurz-dev/kurz/internal/analytics"
)

// Version3Migrated checks a store opened on a version-3 database (clients
// without a city) that held, on day, 4 clicks of one visitor of link u1
// of workspace ns from DE, rolled up by version 3 (its workspace and link
// rows detailed). After the migration that day's clicks are of an unknown
// city from the raw events and from both rollups, and a new click with a
// city is its own row; the countries are those of both. now is after the
// day closed. Both stores' migration tests end with it.
func Version3Migrated(t *testing.T, s analytics.Store, day, now time.Time) {
	t.Helper()
	g := NewWithT(t)
	ctx := context.Background()
	byCity := func(src analytics.Source, links ...string) []analytics.Row {
		res, err := s.Query(ctx, analytics.Query{Namespace: "ns", Links: links, GroupBy: analytics.GroupByCity, Granularity: analytics.Day,
			Start: day, End: day.AddDate(0, 0, 1), Source: src})
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(res.Source).To(Equal(src))
		return res.Rows
	}
	unknown := []analytics.Row{{Key: "", Clicks: 4, Visitors: 1}}
	g.Expect(byCity(analytics.SourceEvents)).To(Equal(unknown), "raw events")
	g.Expect(byCity(analytics.SourceRollups)).To(Equal(unknown), "the workspace's rollups of version 3")
	g.Expect(byCity(analytics.SourceRollups, "u1")).To(Equal(unknown), "the link's rollups of version 3")

	g.Expect(s.Write(ctx, analytics.Batch{ID: "b-1", Events: []analytics.Event{{Time: day.Add(2 * time.Hour),
		Link: analytics.LinkRef{UID: "u1", Namespace: "ns", Name: "l", Domain: "example.com", Key: "k"}, Device: analytics.DeviceDesktop,
		Country: "DE", City: analytics.CityKey("DE", "Berlin"), Visitor: 10, Clicks: 1}}})).To(Succeed())
	g.Expect(s.Maintain(ctx, now)).To(Succeed())
	want := []analytics.Row{{Key: "", Clicks: 4, Visitors: 1}, {Key: "DE/Berlin", Clicks: 1, Visitors: 1}}
	g.Expect(byCity(analytics.SourceEvents)).To(Equal(want))
	g.Expect(byCity(analytics.SourceRollups)).To(Equal(want))
	res, err := s.Query(ctx, analytics.Query{Namespace: "ns", GroupBy: analytics.GroupByCountry, Granularity: analytics.Day, Start: day, End: now})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(res.Rows).To(Equal([]analytics.Row{{Key: "DE", Clicks: 5, Visitors: 2}}), "both clients are DE's")
}
