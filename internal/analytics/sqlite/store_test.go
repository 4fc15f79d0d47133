package sqlite

import (
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	. "github.com/onsi/gomega"

	"github.com/kurz-dev/kurz/internal/analytics"
	"github.com/kurz-dev/kurz/internal/analytics/synth"
)

// day0 is the first generated day: March 25th, so the data crosses a month
// and New York's and London's clocks going forward.
var day0 = time.Date(2025, 3, 25, 0, 0, 0, 0, time.UTC)

func testOptions(t testing.TB) Options {
	o := DefaultOptions()
	o.Path = filepath.Join(t.TempDir(), "analytics.db")
	o.DetailThreshold = 40
	o.MaintainChunk = 7
	return o
}

func openTest(t testing.TB, o Options, now time.Time) *Store {
	t.Helper()
	s, err := Open(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	s.now = func() time.Time { return now }
	t.Cleanup(func() { s.Close() })
	return s
}

// load writes the generator's days through an Aggregator in batches, as a
// writer would, and returns the events written (aggregated).
func load(t testing.TB, s *Store, g *synth.Generator, days int) []analytics.Event {
	t.Helper()
	var all []analytics.Event
	a := analytics.NewAggregator(1024)
	seq := 0
	flush := func() {
		seq++
		b := a.Take(fmt.Sprintf("test-%d", seq))
		if err := s.Write(context.Background(), b); err != nil {
			t.Fatal(err)
		}
		all = append(all, b.Events...)
	}
	for d := range days {
		g.Day(d, func(e *analytics.Event) {
			a.Add(*e)
			if a.Len() >= 1000 {
				flush()
			}
		})
	}
	flush()
	return all
}

var zones = func() []*time.Location {
	var out []*time.Location
	for _, n := range []string{"UTC", "America/New_York", "Asia/Kolkata", "Europe/London", "Asia/Tokyo"} {
		l, err := time.LoadLocation(n)
		if err != nil {
			panic(err)
		}
		out = append(out, l)
	}
	return out
}()

// randomQuery is a query over the generated data: any group_by, filters
// drawn from the events, a link set or not, any zone and range.
func randomQuery(r *rand.Rand, events []analytics.Event, g *synth.Generator, end time.Time) analytics.Query {
	e := events[r.IntN(len(events))]
	q := analytics.Query{
		Namespace:   e.Link.Namespace,
		GroupBy:     analytics.GroupBys[r.IntN(len(analytics.GroupBys))],
		Granularity: []analytics.Granularity{analytics.Hour, analytics.Day, analytics.Month}[r.IntN(3)],
		Location:    zones[r.IntN(len(zones))],
		ExcludeBots: r.IntN(2) == 0,
		Limit:       []int{0, 3, 10}[r.IntN(3)],
	}
	switch r.IntN(4) {
	case 0:
		q.Links = []string{e.Link.UID}
	case 1:
		q.Links = []string{e.Link.UID, g.Links()[r.IntN(len(g.Links()))].UID, "no-such-uid"}
	}
	for range r.IntN(3) {
		d := analytics.Dimensions[r.IntN(len(analytics.Dimensions))]
		o := events[r.IntN(len(events))]
		if q.Filters == nil {
			q.Filters = map[analytics.Dimension][]string{}
		}
		q.Filters[d] = []string{e.Value(d), o.Value(d)}
	}
	if r.IntN(2) == 0 { // what rollups answer: no filter, UTC days
		q.Filters, q.Location = nil, time.UTC
		q.Granularity = []analytics.Granularity{analytics.Day, analytics.Month}[r.IntN(2)]
		if r.IntN(3) == 0 {
			q.Links = []string{g.Links()[g.Hottest()].UID} // detailed days
			q.Namespace = g.Links()[g.Hottest()].Namespace
		}
	}
	span := end.Sub(day0)
	if r.IntN(2) == 0 { // whole UTC days
		a, b := r.IntN(11), r.IntN(11)
		a, b = min(a, b), max(a, b)+1
		q.Start, q.End = day0.AddDate(0, 0, a), day0.AddDate(0, 0, b)
		if q.End.After(end) {
			q.End = end
		}
	} else {
		a := time.Duration(r.Int64N(int64(span)))
		b := time.Duration(r.Int64N(int64(span)))
		a, b = min(a, b), max(a, b)+time.Minute
		q.Start, q.End = day0.Add(a).Truncate(time.Minute), day0.Add(b).Truncate(time.Minute)
	}
	return q
}

// exactFromRollups reports whether the rollups answer q exactly (see
// Query's routing).
func exactFromRollups(q analytics.Query) bool {
	aligned := len(zonePieces(q.Location, q.Start, q.End)) == 1 && zonePieces(q.Location, q.Start, q.End)[0].off == 0
	return q.Granularity != analytics.Hour && aligned && len(q.Filters) == 0 &&
		(q.Links == nil || len(q.Links) == 1 || q.GroupBy == analytics.GroupByLink)
}

func TestQueriesMatchBruteForce(t *testing.T) {
	g := synth.New(synth.Config{Links: 60, Namespaces: 3, Clicks: 30000, Days: 11, Start: day0, Seed: 7, People: 3000})
	// Day 10 is today: not rolled up.
	now := day0.AddDate(0, 0, 10).Add(23 * time.Hour)
	s := openTest(t, testOptions(t), now)
	events := load(t, s, g, 11)
	if err := s.Maintain(context.Background(), now); err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(1, 2))
	counts := map[string]int{}
	for i := range 400 {
		q := randomQuery(r, events, g, now)
		for _, src := range []analytics.Source{analytics.SourceEvents, analytics.SourceRollups, analytics.SourceAuto} {
			if src == analytics.SourceRollups && !exactFromRollups(q) {
				continue
			}
			q.Source = src
			res, err := s.Query(context.Background(), q)
			if err != nil {
				t.Fatalf("query %d %+v: %v", i, q, err)
			}
			want := brute(events, q, res.Start, res.End, res.Location)
			if d := cmp.Diff(want, res.Rows, cmpopts.EquateEmpty(), cmp.Comparer(func(a, b time.Time) bool { return a.Equal(b) })); d != "" {
				t.Fatalf("query %d from %s (%s) %+v\n(-brute +store):\n%s", i, src, res.Source, q, d)
			}
			counts[string(q.GroupBy)+"/"+string(res.Source)]++
		}
	}
	t.Logf("compared: %v", counts)
	for _, gb := range analytics.GroupBys {
		for _, src := range []analytics.Source{analytics.SourceEvents, analytics.SourceRollups} {
			if counts[string(gb)+"/"+string(src)] == 0 {
				t.Errorf("no query grouped by %s was answered from %s", gb, src)
			}
		}
	}
}

func TestRetriedBatchIsStoredOnce(t *testing.T) {
	g := NewWithT(t)
	now := day0.Add(12 * time.Hour)
	s := openTest(t, testOptions(t), now)
	link := analytics.LinkRef{UID: "u1", Namespace: "ns", Name: "a", Domain: "d", Key: "k"}
	b := analytics.Batch{ID: "w1-1", Events: []analytics.Event{{Time: day0.Add(time.Hour), Link: link, Visitor: 5, Clicks: 3, Country: "DE"}}}
	g.Expect(s.Write(context.Background(), b)).To(Succeed())
	g.Expect(s.Write(context.Background(), b)).To(Succeed()) // the retry of a lost answer
	b2 := analytics.Batch{ID: "w1-2", Events: b.Events}
	g.Expect(s.Write(context.Background(), b2)).To(Succeed()) // a new batch with the same row adds
	res, err := s.Query(context.Background(), analytics.Query{Namespace: "ns", GroupBy: analytics.GroupByCountry, Granularity: analytics.Day, Start: day0, End: now})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(res.Rows).To(HaveLen(1))
	g.Expect(res.Rows[0].Clicks).To(Equal(int64(6)))
	g.Expect(res.Rows[0].Visitors).To(Equal(int64(1)))
}

func TestBadBatchWritesNothing(t *testing.T) {
	g := NewWithT(t)
	now := day0.Add(12 * time.Hour)
	s := openTest(t, testOptions(t), now)
	link := analytics.LinkRef{UID: "u1", Namespace: "ns"}
	ok := analytics.Event{Time: day0.Add(time.Hour), Link: link, Clicks: 1}
	bad := ok
	bad.Country = "germany"
	err := s.Write(context.Background(), analytics.Batch{ID: "w-1", Events: []analytics.Event{ok, bad}})
	g.Expect(err).To(MatchError(ContainSubstring("country")))
	res, err := s.Query(context.Background(), analytics.Query{Namespace: "ns", GroupBy: analytics.GroupByLink, Granularity: analytics.Day, Start: day0, End: now})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(res.Rows).To(BeEmpty())
	// The id was not recorded either: the fixed batch goes through.
	g.Expect(s.Write(context.Background(), analytics.Batch{ID: "w-1", Events: []analytics.Event{ok}})).To(Succeed())
	res, err = s.Query(context.Background(), analytics.Query{Namespace: "ns", GroupBy: analytics.GroupByLink, Granularity: analytics.Day, Start: day0, End: now})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(res.Rows).To(HaveLen(1))
}
