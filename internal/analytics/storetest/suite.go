package storetest

import (
	"context"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	. "github.com/onsi/gomega" //nolint:staticcheck // ST1001: the suite is tests, written as the stores' own tests are

	"github.com/kurz-dev/kurz/internal/analytics"
	"github.com/kurz-dev/kurz/internal/analytics/sqlplan"
	"github.com/kurz-dev/kurz/internal/analytics/synth"
)

// Run runs the suite against b, each test on a new store.
func Run(t *testing.T, b Backend) {
	for _, c := range []struct {
		name string
		f    func(*testing.T, Backend)
	}{
		{"QueriesMatchBruteForce", queriesMatchBruteForce},
		{"RetriedBatchIsStoredOnce", retriedBatchIsStoredOnce},
		{"BadBatchWritesNothing", badBatchWritesNothing},
		{"RestartKeepsData", restartKeepsData},
		{"RetentionAndDeletion", retentionAndDeletion},
		{"LateEventOfRolledDayIsRolledAgain", lateEventOfRolledDay},
		{"MonthlyRollupsAnswerFilters", monthlyRollupsAnswerFilters},
		{"MonthlyRangeEndingInsideRolledMonth", monthlyRangeEndingInsideRolledMonth},
		{"TopLinksOverWholeMonths", topLinksOverWholeMonths},
		{"CitiesAreKeyedByCountry", citiesAreKeyedByCountry},
		{"QueryHonoursContext", queryHonoursContext},
		{"ClosedStoreFails", closedStoreFails},
	} {
		t.Run(c.name, func(t *testing.T) { c.f(t, b) })
	}
}

// RandomQuery is a query over the generated data: any group_by, filters
// drawn from the events, a link set or not, any zone and range up to end.
func RandomQuery(r *rand.Rand, events []analytics.Event, g *synth.Generator, end time.Time) analytics.Query {
	e := events[r.IntN(len(events))]
	q := analytics.Query{
		Namespace:   e.Link.Namespace,
		GroupBy:     analytics.GroupBys[r.IntN(len(analytics.GroupBys))],
		Granularity: []analytics.Granularity{analytics.Hour, analytics.Day, analytics.Month}[r.IntN(3)],
		Location:    Zones[r.IntN(len(Zones))],
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
	if r.IntN(2) == 0 { // what rollups answer: no filter, UTC days (a breakdown in any zone)
		q.Filters = nil
		if q.GroupBy == analytics.GroupByTimeseries || r.IntN(2) == 0 {
			q.Location = time.UTC
		}
		q.Granularity = []analytics.Granularity{analytics.Day, analytics.Month}[r.IntN(2)]
		if r.IntN(3) == 0 {
			q.Links = []string{g.Links()[g.Hottest()].UID} // detailed days
			q.Namespace = g.Links()[g.Hottest()].Namespace
		}
	}
	span := end.Sub(Day0)
	if r.IntN(2) == 0 { // whole UTC days
		a, b := r.IntN(11), r.IntN(11)
		a, b = min(a, b), max(a, b)+1
		q.Start, q.End = Day0.AddDate(0, 0, a), Day0.AddDate(0, 0, b)
		if q.End.After(end) {
			q.End = end
		}
	} else {
		a := time.Duration(r.Int64N(int64(span)))
		b := time.Duration(r.Int64N(int64(span)))
		a, b = min(a, b), max(a, b)+time.Minute
		q.Start, q.End = Day0.Add(a).Truncate(time.Minute), Day0.Add(b).Truncate(time.Minute)
	}
	return q
}

// exactFromRollups reports whether the rollups answer q exactly.
func exactFromRollups(q analytics.Query) bool {
	return sqlplan.ExactFromRollups(q, sqlplan.UTCBuckets(q, q.Location, q.Start, q.End))
}

var equateTimes = cmp.Comparer(func(a, b time.Time) bool { return a.Equal(b) })

func queriesMatchBruteForce(t *testing.T, b Backend) {
	g := synth.New(synth.Config{Links: 60, Namespaces: 3, Clicks: 30000, Days: 11, Start: Day0, Seed: 7, People: 3000})
	// Day 10 is today: not rolled up.
	now := Day0.AddDate(0, 0, 10).Add(23 * time.Hour)
	s := b.OpenNew(t, DefaultOptions(), NewClock(now))
	events := Load(t, s, g, 11)
	if err := s.Maintain(context.Background(), now); err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(1, 2))
	counts := map[string]int{}
	for i := range 400 {
		q := RandomQuery(r, events, g, now)
		for _, src := range []analytics.Source{analytics.SourceEvents, analytics.SourceRollups, analytics.SourceAuto} {
			if src == analytics.SourceRollups && !exactFromRollups(q) {
				continue
			}
			q.Source = src
			res, err := s.Query(context.Background(), q)
			if err != nil {
				t.Fatalf("query %d %+v: %v", i, q, err)
			}
			want := Brute(events, q, res.Start, res.End, res.Location)
			if d := cmp.Diff(want, res.Rows, cmpopts.EquateEmpty(), equateTimes); d != "" {
				t.Fatalf("query %d from %s (%s) %+v\n(-brute +store):\n%s", i, src, res.Source, q, d)
			}
			counts[string(q.GroupBy)+"/"+string(res.Source)]++
			if res.Source == analytics.SourceRollups && q.GroupBy != analytics.GroupByTimeseries && !sqlplan.UTCAligned(sqlplan.ZonePieces(q.Location, q.Start, q.End)) {
				counts["zoned breakdown/rollups"]++
			}
		}
	}
	t.Logf("compared: %v", counts)
	if counts["zoned breakdown/rollups"] == 0 {
		t.Error("no breakdown in a zone off UTC was answered from rollups")
	}
	for _, gb := range analytics.GroupBys {
		for _, src := range []analytics.Source{analytics.SourceEvents, analytics.SourceRollups} {
			if counts[string(gb)+"/"+string(src)] == 0 {
				t.Errorf("no query grouped by %s was answered from %s", gb, src)
			}
		}
	}
}

func retriedBatchIsStoredOnce(t *testing.T, b Backend) {
	g := NewWithT(t)
	now := Day0.Add(12 * time.Hour)
	s := b.OpenNew(t, DefaultOptions(), NewClock(now))
	link := analytics.LinkRef{UID: "u1", Namespace: "ns", Name: "a", Domain: "d", Key: "k"}
	bt := analytics.Batch{ID: "w1-1", Events: []analytics.Event{{Time: Day0.Add(time.Hour), Link: link, Visitor: 5, Clicks: 3, Country: "DE"}}}
	g.Expect(s.Write(context.Background(), bt)).To(Succeed())
	g.Expect(s.Write(context.Background(), bt)).To(Succeed()) // the retry of a lost answer
	b2 := analytics.Batch{ID: "w1-2", Events: bt.Events}
	g.Expect(s.Write(context.Background(), b2)).To(Succeed()) // a new batch with the same row adds
	res, err := s.Query(context.Background(), analytics.Query{Namespace: "ns", GroupBy: analytics.GroupByCountry, Granularity: analytics.Day, Start: Day0, End: now})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(res.Rows).To(Equal([]analytics.Row{{Key: "DE", Clicks: 6, Visitors: 1}}))
}

func badBatchWritesNothing(t *testing.T, b Backend) {
	g := NewWithT(t)
	now := Day0.Add(12 * time.Hour)
	s := b.OpenNew(t, DefaultOptions(), NewClock(now))
	link := analytics.LinkRef{UID: "u1", Namespace: "ns"}
	ok := analytics.Event{Time: Day0.Add(time.Hour), Link: link, Clicks: 1}
	bad := ok
	bad.Country = "germany"
	err := s.Write(context.Background(), analytics.Batch{ID: "w-1", Events: []analytics.Event{ok, bad}})
	g.Expect(err).To(MatchError(ContainSubstring("country")))
	q := linkQuery("ns", Day0, now)
	res, err := s.Query(context.Background(), q)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(res.Rows).To(BeEmpty())
	// The id was not recorded either: the fixed batch goes through.
	g.Expect(s.Write(context.Background(), analytics.Batch{ID: "w-1", Events: []analytics.Event{ok}})).To(Succeed())
	res, err = s.Query(context.Background(), q)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(res.Rows).To(HaveLen(1))
}

func linkQuery(ns string, start, end time.Time) analytics.Query {
	return analytics.Query{Namespace: ns, GroupBy: analytics.GroupByLink, Granularity: analytics.Day, Start: start, End: end, Location: time.UTC}
}

func restartKeepsData(t *testing.T, b Backend) {
	g := NewWithT(t)
	gen := synth.New(synth.Config{Links: 20, Clicks: 3000, Days: 3, Start: Day0, Seed: 3})
	c := NewClock(Day0.AddDate(0, 0, 3))
	place := b.Place(t)
	s, err := b.Open(context.Background(), place, DefaultOptions(), c.Now)
	g.Expect(err).NotTo(HaveOccurred())
	events := Load(t, s, gen, 3)
	q := linkQuery("team-0", Day0, c.Now())
	q.Source = analytics.SourceEvents
	before, err := s.Query(context.Background(), q)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(before.Rows).To(Equal(Brute(events, q, before.Start, before.End, time.UTC)))
	g.Expect(s.Close()).To(Succeed())

	s, _ = b.OpenAt(t, place, DefaultOptions(), c)
	after, err := s.Query(context.Background(), q)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(after.Rows).To(Equal(before.Rows))
	// A batch id applied before the restart is still remembered.
	g.Expect(s.Write(context.Background(), analytics.Batch{ID: "test-1", Events: events[:1]})).To(Succeed())
	again, err := s.Query(context.Background(), q)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(again.Rows).To(Equal(before.Rows))
}

// RetentionOptions are retentionAndDeletion's: raw events from day 8 on,
// rollups from day 5 on, as of Day0 + 10 days and an hour.
func RetentionOptions() Options {
	o := DefaultOptions()
	o.Retention = 3 * 24 * time.Hour
	o.RollupRetention = 6 * 24 * time.Hour
	o.DeleteGrace = time.Hour
	return o
}

func retentionAndDeletion(t *testing.T, b Backend) {
	g := NewWithT(t)
	ctx := context.Background()
	gen := synth.New(synth.Config{Links: 30, Namespaces: 2, Clicks: 20000, Days: 10, Start: Day0, Seed: 11})
	now := Day0.AddDate(0, 0, 10).Add(time.Hour)
	c := NewClock(now)
	s := b.OpenNew(t, RetentionOptions(), c)
	events := Load(t, s, gen, 10)
	g.Expect(s.Maintain(ctx, now)).To(Succeed())
	g.Expect(s.Maintain(ctx, now)).To(Succeed()) // idempotent

	// Raw events answer from day 8; rollups from day 5; nothing older.
	q := linkQuery("team-0", Day0, now)
	q.Source = analytics.SourceEvents
	res, err := s.Query(ctx, q)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(res.Start).To(BeTemporally("==", Day0.AddDate(0, 0, 8)))
	g.Expect(res.Rows).To(Equal(Brute(events, q, res.Start, res.End, time.UTC)))
	for _, gb := range []analytics.GroupBy{analytics.GroupByTimeseries, analytics.GroupByLink, analytics.GroupByCountry, analytics.GroupByReferrer} {
		q := linkQuery("team-1", Day0, now)
		q.GroupBy = gb
		res, err := s.Query(ctx, q)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(res.Source).To(Equal(analytics.SourceRollups))
		g.Expect(res.Start).To(BeTemporally("==", Day0.AddDate(0, 0, 5)))
		g.Expect(res.Rows).To(Equal(Brute(events, q, res.Start, res.End, time.UTC)), string(gb))
	}
	// Raw events of day 7 are gone: a range of that day from raw events
	// is moved to day 8.
	q = linkQuery("team-1", Day0.AddDate(0, 0, 7), Day0.AddDate(0, 0, 9))
	q.Source = analytics.SourceEvents
	res, err = s.Query(ctx, q)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(res.Start).To(BeTemporally("==", Day0.AddDate(0, 0, 8)))

	// Beyond the raw retention: hours refused, a zone a whole number of
	// hours off answered in UTC, a half-hour zone refused, each naming why.
	q = linkQuery("team-1", Day0.AddDate(0, 0, 5), now)
	q.GroupBy, q.Granularity = analytics.GroupByTimeseries, analytics.Hour
	_, err = s.Query(ctx, q)
	qe, ok := analytics.AsQueryError(err)
	g.Expect(ok).To(BeTrue(), "%v", err)
	g.Expect(qe.Param).To(Equal("granularity"))
	q.Granularity, q.Location = analytics.Day, Zones[1] // New York
	res, err = s.Query(ctx, q)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(res.Location).To(Equal(time.UTC))
	q.Location = Zones[2] // Kolkata, +05:30
	_, err = s.Query(ctx, q)
	qe, ok = analytics.AsQueryError(err)
	g.Expect(ok).To(BeTrue(), "%v", err)
	g.Expect(qe.Param).To(Equal("timezone"))

	// A deleted link stays for the grace, then goes with all it had.
	gone := gen.Links()[0]
	g.Expect(gone.Namespace).To(Equal("team-0"))
	g.Expect(s.Forget(ctx, now, gone.UID)).To(Succeed())
	g.Expect(s.Maintain(ctx, now)).To(Succeed())
	res, err = s.Query(ctx, linkQuery("team-0", Day0, now))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(res.Rows).To(ContainElement(HaveField("Key", gone.UID)))
	later := now.Add(2 * time.Hour)
	c.Set(later)
	g.Expect(s.Maintain(ctx, later)).To(Succeed())
	for _, src := range []analytics.Source{analytics.SourceEvents, analytics.SourceRollups} {
		q := linkQuery("team-0", Day0, later)
		q.Source = src
		res, err = s.Query(ctx, q)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(res.Rows).NotTo(BeEmpty())
		g.Expect(res.Rows).NotTo(ContainElement(HaveField("Key", gone.UID)), string(src))
		q.Links = []string{gone.UID}
		q.GroupBy, q.Granularity = analytics.GroupByCountry, analytics.Month
		res, err = s.Query(ctx, q)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(res.Rows).To(BeEmpty(), string(src))
	}

	// A namespace whose links are all deleted loses its workspace rollups.
	var uids []string
	for _, l := range gen.Links() {
		if l.Namespace == "team-1" {
			uids = append(uids, l.UID)
		}
	}
	g.Expect(s.Forget(ctx, later, uids...)).To(Succeed())
	last := later.Add(2 * time.Hour)
	c.Set(last)
	g.Expect(s.Maintain(ctx, last)).To(Succeed())
	for _, ns := range []string{"team-0", "team-1"} {
		q := linkQuery(ns, Day0, last)
		q.GroupBy = analytics.GroupByCountry
		res, err = s.Query(ctx, q)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(res.Source).To(Equal(analytics.SourceRollups))
		if ns == "team-1" {
			g.Expect(res.Rows).To(BeEmpty())
		} else {
			g.Expect(res.Rows).NotTo(BeEmpty())
		}
	}
}

func lateEventOfRolledDay(t *testing.T, b Backend) {
	g := NewWithT(t)
	ctx := context.Background()
	now := Day0.AddDate(0, 0, 2)
	s := b.OpenNew(t, DefaultOptions(), NewClock(now))
	link := analytics.LinkRef{UID: "u1", Namespace: "ns"}
	ev := analytics.Event{Time: Day0.Add(time.Hour), Link: link, Visitor: 1, Clicks: 1, Country: "FR"}
	g.Expect(s.Write(ctx, analytics.Batch{ID: "a-1", Events: []analytics.Event{ev}})).To(Succeed())
	g.Expect(s.Maintain(ctx, now)).To(Succeed())
	ev.Visitor, ev.Clicks = 2, 2
	g.Expect(s.Write(ctx, analytics.Batch{ID: "a-2", Events: []analytics.Event{ev}})).To(Succeed())
	day := func(gb analytics.GroupBy) analytics.Query {
		return analytics.Query{Namespace: "ns", GroupBy: gb, Granularity: analytics.Day, Start: Day0, End: Day0.AddDate(0, 0, 1), Source: analytics.SourceRollups}
	}
	for _, maintained := range []bool{false, true} {
		// Before Maintain the day is not rolled up: raw events answer.
		// After, the rollups hold the late event too.
		res, err := s.Query(ctx, day(analytics.GroupByCountry))
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(res.Rows).To(Equal([]analytics.Row{{Key: "FR", Clicks: 3, Visitors: 2}}), "maintained %v", maintained)
		res, err = s.Query(ctx, day(analytics.GroupByLink))
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(res.Rows).To(HaveLen(1))
		g.Expect(res.Rows[0].Clicks).To(Equal(int64(3)), "maintained %v", maintained)
		g.Expect(s.Maintain(ctx, now)).To(Succeed())
	}
}

func monthlyRollupsAnswerFilters(t *testing.T, b Backend) {
	g := NewWithT(t)
	ctx := context.Background()
	gen := synth.New(synth.Config{Links: 20, Clicks: 8000, Days: 11, Start: Day0, Seed: 5})
	now := Day0.AddDate(0, 0, 10).Add(23 * time.Hour)
	s := b.OpenNew(t, DefaultOptions(), NewClock(now))
	events := Load(t, s, gen, 11)
	g.Expect(s.Maintain(ctx, now)).To(Succeed())
	for _, gb := range []analytics.GroupBy{analytics.GroupByTimeseries, analytics.GroupByCountry, analytics.GroupByLink} {
		q := analytics.Query{Namespace: "team-0", GroupBy: gb, Granularity: analytics.Month, Start: Day0, End: now,
			Filters: map[analytics.Dimension][]string{analytics.DimDevice: {"mobile", "desktop"}}, Source: analytics.SourceRollups}
		res, err := s.Query(ctx, q)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(res.Start).To(BeTemporally("==", time.Date(2025, 3, 1, 0, 0, 0, 0, time.UTC)))
		want := Brute(events, q, res.Start, res.End, time.UTC)
		g.Expect(res.Rows).To(HaveLen(len(want)))
		for i := range want {
			// Clicks are exact; visitors from link_months are summed over
			// dimension combinations, so at least the exact count.
			g.Expect(res.Rows[i].Key).To(Equal(want[i].Key))
			g.Expect(res.Rows[i].Clicks).To(Equal(want[i].Clicks))
			g.Expect(res.Rows[i].Visitors).To(BeNumerically(">=", want[i].Visitors))
		}
	}
}

// A range that ends inside a rolled-up month reads that month's part from
// raw events (the monthly rollup covers more than the range).
func monthlyRangeEndingInsideRolledMonth(t *testing.T, b Backend) {
	g := NewWithT(t)
	ctx := context.Background()
	gen := synth.New(synth.Config{Links: 20, Clicks: 8000, Days: 11, Start: Day0, Seed: 5})
	now := Day0.AddDate(0, 0, 10).Add(23 * time.Hour)
	s := b.OpenNew(t, DefaultOptions(), NewClock(now))
	events := Load(t, s, gen, 11)
	g.Expect(s.Maintain(ctx, now)).To(Succeed())
	for _, end := range []time.Time{Day0.AddDate(0, 0, 5), now} { // March 30th, April 4th
		q := analytics.Query{Namespace: "team-0", GroupBy: analytics.GroupByCountry, Granularity: analytics.Month, Start: Day0, End: end,
			Filters: map[analytics.Dimension][]string{analytics.DimDevice: {"mobile", "desktop"}}, Source: analytics.SourceRollups}
		res, err := s.Query(ctx, q)
		g.Expect(err).NotTo(HaveOccurred())
		var got, want int64
		for _, r := range res.Rows {
			got += r.Clicks
		}
		for _, r := range Brute(events, q, res.Start, res.End, time.UTC) {
			want += r.Clicks
		}
		g.Expect(want).To(BeNumerically(">", 0))
		g.Expect(got).To(Equal(want), "range %s to %s", res.Start, res.End)
	}
}

func queryHonoursContext(t *testing.T, b Backend) {
	g := NewWithT(t)
	s := b.OpenNew(t, DefaultOptions(), NewClock(Day0.Add(time.Hour)))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := s.Query(ctx, linkQuery("ns", Day0, Day0.Add(time.Hour)))
	g.Expect(err).To(MatchError(context.Canceled))
	err = s.Write(ctx, analytics.Batch{ID: "x", Events: []analytics.Event{{Time: Day0, Link: analytics.LinkRef{UID: "u", Namespace: "ns"}, Clicks: 1}}})
	g.Expect(err).To(MatchError(context.Canceled))
}

func closedStoreFails(t *testing.T, b Backend) {
	g := NewWithT(t)
	s, err := b.Open(context.Background(), b.Place(t), DefaultOptions(), NewClock(Day0).Now)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(s.Close()).To(Succeed())
	err = s.Write(context.Background(), analytics.Batch{ID: "x", Events: []analytics.Event{{Time: Day0, Link: analytics.LinkRef{UID: "u", Namespace: "ns"}, Clicks: 1}}})
	g.Expect(err).To(HaveOccurred())
	_, err = s.Query(context.Background(), linkQuery("ns", Day0, Day0.Add(time.Hour)))
	g.Expect(err).To(HaveOccurred())
}

// Top links over a range that covers a month whole read that month's
// per-link totals (link_mtotals) and link_days for the other days; a late
// event of the month makes the totals stale until Maintain sums them again,
// and the answers match the brute force before and after.
func topLinksOverWholeMonths(t *testing.T, b Backend) {
	g := NewWithT(t)
	ctx := context.Background()
	// 2025-03-25 to 2025-05-08: April whole, parts of March and May.
	gen := synth.New(synth.Config{Links: 20, Clicks: 9000, Days: 45, Start: Day0, Seed: 13})
	now := Day0.AddDate(0, 0, 45).Add(time.Hour)
	s := b.OpenNew(t, DefaultOptions(), NewClock(now))
	events := Load(t, s, gen, 45)
	g.Expect(s.Maintain(ctx, now)).To(Succeed())
	check := func(what string) {
		t.Helper()
		for _, bots := range []bool{false, true} {
			q := linkQuery("team-0", Day0.AddDate(0, 0, 3), Day0.AddDate(0, 0, 44))
			q.ExcludeBots = bots
			res, err := s.Query(ctx, q)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(res.Source).To(Equal(analytics.SourceRollups), what)
			want := Brute(events, q, res.Start, res.End, time.UTC)
			g.Expect(res.Rows).To(Equal(want), "%s, exclude_bots %v", what, bots)
		}
	}
	check("rolled up")
	var late analytics.Event
	for _, e := range events {
		if e.Link.Namespace == "team-0" {
			late = e
		}
	}
	late.Time = time.Date(2025, 4, 10, 12, 0, 0, 0, time.UTC)
	late.Clicks = 1000 // enough to move the link up the ranking
	g.Expect(s.Write(ctx, analytics.Batch{ID: "late-1", Events: []analytics.Event{late}})).To(Succeed())
	events = append(events, late)
	check("after a late event")
	g.Expect(s.Maintain(ctx, now)).To(Succeed())
	check("after Maintain")
}
