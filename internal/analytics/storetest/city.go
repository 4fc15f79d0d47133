package storetest

import (
	"context"
	"testing"
	"time"

	. "github.com/onsi/gomega" //nolint:staticcheck // ST1001: as in suite.go

	"github.com/kurz-dev/kurz/internal/analytics"
)

// citiesAreKeyedByCountry: two cities of one name in two countries are two
// rows, from the raw events and from the rollups alike, and a city filter
// keeps only its country's; a city's clicks are its country's too.
func citiesAreKeyedByCountry(t *testing.T, b Backend) {
	g := NewWithT(t)
	ctx := context.Background()
	now := Day0.AddDate(0, 0, 2)
	s := b.OpenNew(t, DefaultOptions(), NewClock(now))
	link := analytics.LinkRef{UID: "u1", Namespace: "ns", Name: "a", Domain: "d", Key: "k"}
	at := Day0.Add(time.Hour)
	ev := func(visitor uint64, country, city string, clicks int64) analytics.Event {
		return analytics.Event{Time: at, Link: link, Device: analytics.DeviceDesktop, Visitor: visitor, Country: country, City: city, Clicks: clicks}
	}
	de, us := analytics.CityKey("DE", "Frankfurt"), analytics.CityKey("US", "Frankfurt")
	g.Expect(s.Write(ctx, analytics.Batch{ID: "w-1", Events: []analytics.Event{
		ev(1, "DE", de, 3), ev(2, "US", us, 2), ev(3, "DE", "", 1), ev(4, "", "", 1),
	}})).To(Succeed())

	q := analytics.Query{Namespace: "ns", GroupBy: analytics.GroupByCity, Granularity: analytics.Day, Start: Day0, End: Day0.AddDate(0, 0, 1), Location: time.UTC}
	answer := func(q analytics.Query, src analytics.Source) []analytics.Row {
		q.Source = src
		res, err := s.Query(ctx, q)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(res.Source).To(Equal(src))
		return res.Rows
	}
	want := []analytics.Row{{Key: "DE/Frankfurt", Clicks: 3, Visitors: 1}, {Key: "", Clicks: 2, Visitors: 2}, {Key: "US/Frankfurt", Clicks: 2, Visitors: 1}}
	g.Expect(answer(q, analytics.SourceEvents)).To(Equal(want), "from raw events")
	g.Expect(s.Maintain(ctx, now)).To(Succeed())
	g.Expect(answer(q, analytics.SourceRollups)).To(Equal(want), "from the workspace's rollups")
	one := q
	one.Links = []string{"u1"}
	g.Expect(answer(one, analytics.SourceRollups)).To(Equal(want), "from the link's rollups")

	// Filtered by one city: its country only.
	q.GroupBy, q.Filters = analytics.GroupByCountry, map[analytics.Dimension][]string{analytics.DimCity: {"US/Frankfurt"}}
	g.Expect(answer(q, analytics.SourceEvents)).To(Equal([]analytics.Row{{Key: "US", Clicks: 2, Visitors: 1}}))
}
