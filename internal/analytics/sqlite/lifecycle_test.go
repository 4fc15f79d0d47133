package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"

	"github.com/kurz-dev/kurz/internal/analytics"
	"github.com/kurz-dev/kurz/internal/analytics/synth"
)

func linkQuery(ns string, start, end time.Time) analytics.Query {
	return analytics.Query{Namespace: ns, GroupBy: analytics.GroupByLink, Granularity: analytics.Day, Start: start, End: end, Location: time.UTC}
}

func TestRestartKeepsData(t *testing.T) {
	g := NewWithT(t)
	gen := synth.New(synth.Config{Links: 20, Clicks: 3000, Days: 3, Start: day0, Seed: 3})
	now := day0.AddDate(0, 0, 3)
	o := testOptions(t)
	s, err := Open(context.Background(), o)
	g.Expect(err).NotTo(HaveOccurred())
	s.now = func() time.Time { return now }
	events := load(t, s, gen, 3)
	q := linkQuery("team-0", day0, now)
	q.Source = analytics.SourceEvents
	before, err := s.Query(context.Background(), q)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(before.Rows).To(Equal(brute(events, q, before.Start, before.End, time.UTC)))
	g.Expect(s.Close()).To(Succeed())

	s = openTest(t, o, now)
	after, err := s.Query(context.Background(), q)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(after.Rows).To(Equal(before.Rows))
	// A batch id applied before the restart is still remembered.
	var n int
	g.Expect(s.r.QueryRow("SELECT count(*) FROM batches").Scan(&n)).To(Succeed())
	g.Expect(n).To(BeNumerically(">", 0))
	g.Expect(s.Write(context.Background(), analytics.Batch{ID: "test-1", Events: events[:1]})).To(Succeed())
	again, err := s.Query(context.Background(), q)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(again.Rows).To(Equal(before.Rows))
}

func TestMigratesVersion1Database(t *testing.T) {
	g := NewWithT(t)
	o := testOptions(t)
	ctx := context.Background()
	v1, err := open(ctx, o, 1)
	g.Expect(err).NotTo(HaveOccurred())
	// What a version-1 store held: a link, its strings, one event.
	for _, q := range []string{
		"INSERT INTO strs (id, s) VALUES (1, 'ns'), (2, 'DE')",
		"INSERT INTO links (id, uid, namespace, name, domain, key) VALUES (1, 'u1', 1, 'n', 'd', 'k')",
		"INSERT INTO clients (id, device, os, browser, country) VALUES (1, 1, 0, 0, 2)",
		"INSERT INTO sources (id, referrer, utm_source, utm_medium, utm_campaign) VALUES (1, 0, 0, 0, 0)",
		"INSERT INTO events (day, link, minute, visitor, client, source, clicks) VALUES (?, 1, 60, 9, 1, 1, 4)",
	} {
		_, err := v1.w.Exec(q, day0.Unix()/86400)
		g.Expect(err).NotTo(HaveOccurred(), q)
	}
	var version int
	g.Expect(v1.w.QueryRow("PRAGMA user_version").Scan(&version)).To(Succeed())
	g.Expect(version).To(Equal(1))
	g.Expect(v1.Close()).To(Succeed())

	now := day0.AddDate(0, 0, 2)
	s := openTest(t, o, now)
	g.Expect(s.w.QueryRow("PRAGMA user_version").Scan(&version)).To(Succeed())
	g.Expect(version).To(Equal(len(migrations)))
	g.Expect(s.Maintain(ctx, now)).To(Succeed()) // the rollup tables of version 2 work
	res, err := s.Query(ctx, analytics.Query{Namespace: "ns", GroupBy: analytics.GroupByCountry, Granularity: analytics.Day, Start: day0, End: now, Source: analytics.SourceRollups})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(res.Rows).To(Equal([]analytics.Row{{Key: "DE", Clicks: 4, Visitors: 1}}))
}

func TestRefusesNewerSchema(t *testing.T) {
	g := NewWithT(t)
	o := testOptions(t)
	s, err := Open(context.Background(), o)
	g.Expect(err).NotTo(HaveOccurred())
	_, err = s.w.Exec("PRAGMA user_version = 99")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(s.Close()).To(Succeed())
	_, err = Open(context.Background(), o)
	g.Expect(err).To(MatchError(ContainSubstring("schema version 99")))
}

func TestRetentionAndDeletion(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	gen := synth.New(synth.Config{Links: 30, Namespaces: 2, Clicks: 20000, Days: 10, Start: day0, Seed: 11})
	now := day0.AddDate(0, 0, 10).Add(time.Hour)
	o := testOptions(t)
	o.Retention = 3 * 24 * time.Hour       // raw events from day 8 on
	o.RollupRetention = 6 * 24 * time.Hour // rollups from day 5 on
	o.DeleteGrace = time.Hour
	s := openTest(t, o, now)
	events := load(t, s, gen, 10)
	g.Expect(s.Maintain(ctx, now)).To(Succeed())
	g.Expect(s.Maintain(ctx, now)).To(Succeed()) // idempotent

	var oldest int64
	g.Expect(s.r.QueryRow("SELECT min(day) FROM events").Scan(&oldest)).To(Succeed())
	g.Expect(oldest).To(Equal(day0.Unix()/86400 + 8))

	// Raw events answer from day 8; rollups from day 5; nothing older.
	q := linkQuery("team-0", day0, now)
	q.Source = analytics.SourceEvents
	res, err := s.Query(ctx, q)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(res.Start).To(BeTemporally("==", day0.AddDate(0, 0, 8)))
	g.Expect(res.Rows).To(Equal(brute(events, q, res.Start, res.End, time.UTC)))
	for _, gb := range []analytics.GroupBy{analytics.GroupByTimeseries, analytics.GroupByLink, analytics.GroupByCountry, analytics.GroupByReferrer} {
		q := linkQuery("team-1", day0, now)
		q.GroupBy = gb
		res, err := s.Query(ctx, q)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(res.Source).To(Equal(analytics.SourceRollups))
		g.Expect(res.Start).To(BeTemporally("==", day0.AddDate(0, 0, 5)))
		g.Expect(res.Rows).To(Equal(brute(events, q, res.Start, res.End, time.UTC)), string(gb))
	}
	// Beyond the raw retention: hours refused, a zone a whole number of
	// hours off answered in UTC, a half-hour zone refused, each naming why.
	q = linkQuery("team-1", day0.AddDate(0, 0, 5), now)
	q.GroupBy, q.Granularity = analytics.GroupByTimeseries, analytics.Hour
	_, err = s.Query(ctx, q)
	qe, ok := analytics.AsQueryError(err)
	g.Expect(ok).To(BeTrue(), "%v", err)
	g.Expect(qe.Param).To(Equal("granularity"))
	q.Granularity, q.Location = analytics.Day, zones[1] // New York
	res, err = s.Query(ctx, q)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(res.Location).To(Equal(time.UTC))
	q.Location = zones[2] // Kolkata, +05:30
	_, err = s.Query(ctx, q)
	qe, ok = analytics.AsQueryError(err)
	g.Expect(ok).To(BeTrue(), "%v", err)
	g.Expect(qe.Param).To(Equal("timezone"))

	// A deleted link stays for the grace, then goes with all it had.
	gone := gen.Links()[0]
	g.Expect(gone.Namespace).To(Equal("team-0"))
	g.Expect(s.Forget(ctx, now, gone.UID)).To(Succeed())
	g.Expect(s.Maintain(ctx, now)).To(Succeed())
	res, err = s.Query(ctx, linkQuery("team-0", day0, now))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(res.Rows).To(ContainElement(HaveField("Key", gone.UID)))
	later := now.Add(2 * time.Hour)
	s.now = func() time.Time { return later }
	g.Expect(s.Maintain(ctx, later)).To(Succeed())
	res, err = s.Query(ctx, linkQuery("team-0", day0, later))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(res.Rows).NotTo(BeEmpty())
	g.Expect(res.Rows).NotTo(ContainElement(HaveField("Key", gone.UID)))
	for _, table := range []string{"events", "link_days", "link_values", "link_months"} {
		var n int
		g.Expect(s.r.QueryRow("SELECT count(*) FROM " + table + " WHERE link NOT IN (SELECT id FROM links)").Scan(&n)).To(Succeed())
		g.Expect(n).To(BeZero(), table)
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
	s.now = func() time.Time { return last }
	g.Expect(s.Maintain(ctx, last)).To(Succeed())
	var n int
	g.Expect(s.r.QueryRow("SELECT count(*) FROM ws_values WHERE namespace = (SELECT id FROM strs WHERE s = 'team-1')").Scan(&n)).To(Succeed())
	g.Expect(n).To(BeZero())
	g.Expect(s.r.QueryRow("SELECT count(*) FROM ws_values WHERE namespace = (SELECT id FROM strs WHERE s = 'team-0')").Scan(&n)).To(Succeed())
	g.Expect(n).To(BeNumerically(">", 0))
}

func TestLateEventOfRolledDayIsRolledAgain(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	now := day0.AddDate(0, 0, 2)
	s := openTest(t, testOptions(t), now)
	link := analytics.LinkRef{UID: "u1", Namespace: "ns"}
	ev := analytics.Event{Time: day0.Add(time.Hour), Link: link, Visitor: 1, Clicks: 1, Country: "FR"}
	g.Expect(s.Write(ctx, analytics.Batch{ID: "a-1", Events: []analytics.Event{ev}})).To(Succeed())
	g.Expect(s.Maintain(ctx, now)).To(Succeed())
	ev.Visitor, ev.Clicks = 2, 2
	g.Expect(s.Write(ctx, analytics.Batch{ID: "a-2", Events: []analytics.Event{ev}})).To(Succeed())
	q := analytics.Query{Namespace: "ns", GroupBy: analytics.GroupByCountry, Granularity: analytics.Day, Start: day0, End: day0.AddDate(0, 0, 1), Source: analytics.SourceRollups}
	res, err := s.Query(ctx, q) // the day is not rolled up now: raw events answer
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(res.Rows).To(Equal([]analytics.Row{{Key: "FR", Clicks: 3, Visitors: 2}}))
	g.Expect(s.Maintain(ctx, now)).To(Succeed())
	var clicks int64
	g.Expect(s.r.QueryRow("SELECT sum(clicks) FROM link_days").Scan(&clicks)).To(Succeed())
	g.Expect(clicks).To(Equal(int64(3)))
	res, err = s.Query(ctx, q)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(res.Rows).To(Equal([]analytics.Row{{Key: "FR", Clicks: 3, Visitors: 2}}))
}

func TestMonthlyRollupsAnswerFilters(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	gen := synth.New(synth.Config{Links: 20, Clicks: 8000, Days: 11, Start: day0, Seed: 5})
	now := day0.AddDate(0, 0, 10).Add(23 * time.Hour)
	s := openTest(t, testOptions(t), now)
	events := load(t, s, gen, 11)
	g.Expect(s.Maintain(ctx, now)).To(Succeed())
	var months int
	g.Expect(s.r.QueryRow("SELECT count(*) FROM rolled_months WHERE done").Scan(&months)).To(Succeed())
	g.Expect(months).To(Equal(1)) // March
	for _, gb := range []analytics.GroupBy{analytics.GroupByTimeseries, analytics.GroupByCountry, analytics.GroupByLink} {
		q := analytics.Query{Namespace: "team-0", GroupBy: gb, Granularity: analytics.Month, Start: day0, End: now,
			Filters: map[analytics.Dimension][]string{analytics.DimDevice: {"mobile", "desktop"}}, Source: analytics.SourceRollups}
		res, err := s.Query(ctx, q)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(res.Start).To(BeTemporally("==", time.Date(2025, 3, 1, 0, 0, 0, 0, time.UTC)))
		want := brute(events, q, res.Start, res.End, time.UTC)
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

func TestLockedDatabaseFailsWithoutHanging(t *testing.T) {
	g := NewWithT(t)
	o := testOptions(t)
	o.BusyTimeout = time.Minute // longer than the test may take: ctx must end the wait
	now := day0.Add(time.Hour)
	s := openTest(t, o, now)
	other, err := sql.Open("sqlite", "file:"+o.Path)
	g.Expect(err).NotTo(HaveOccurred())
	defer other.Close()
	conn, err := other.Conn(context.Background())
	g.Expect(err).NotTo(HaveOccurred())
	defer conn.Close()
	_, err = conn.ExecContext(context.Background(), "BEGIN EXCLUSIVE")
	g.Expect(err).NotTo(HaveOccurred())

	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	b := analytics.Batch{ID: "w-1", Events: []analytics.Event{{Time: now, Link: analytics.LinkRef{UID: "u", Namespace: "ns"}, Clicks: 1}}}
	done := make(chan error, 1)
	go func() { done <- s.Write(ctx, b) }()
	select {
	case err := <-done:
		t.Logf("Write while locked: %v", err)
		g.Expect(err).To(HaveOccurred())
		g.Expect(errors.Is(err, context.DeadlineExceeded) || isBusy(err)).To(BeTrue(), "%v", err)
	case <-time.After(30 * time.Second):
		t.Fatal("Write still waits for the lock 30 s after its context ended")
	}
	g.Expect(s.Maintain(ctx, now)).To(HaveOccurred())

	// Released, the same batch goes through (nothing of it was written).
	_, err = conn.ExecContext(context.Background(), "ROLLBACK")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(s.Write(context.Background(), b)).To(Succeed())
}

func isBusy(err error) bool {
	return strings.Contains(err.Error(), "locked") || strings.Contains(err.Error(), "busy") || strings.Contains(err.Error(), "interrupted")
}

func TestBrokenFileIsAnError(t *testing.T) {
	g := NewWithT(t)
	o := testOptions(t)
	g.Expect(os.WriteFile(o.Path, []byte("this is not a database, but long enough to look like a header of one......."), 0o600)).To(Succeed())
	_, err := Open(context.Background(), o)
	g.Expect(err).To(HaveOccurred())

	s := openTest(t, testOptions(t), day0)
	g.Expect(s.Close()).To(Succeed())
	err = s.Write(context.Background(), analytics.Batch{ID: "x", Events: []analytics.Event{{Time: day0, Link: analytics.LinkRef{UID: "u", Namespace: "ns"}, Clicks: 1}}})
	g.Expect(err).To(HaveOccurred())
	_, err = s.Query(context.Background(), linkQuery("ns", day0, day0.Add(time.Hour)))
	g.Expect(err).To(HaveOccurred())
}

func TestQueryHonoursContext(t *testing.T) {
	g := NewWithT(t)
	s := openTest(t, testOptions(t), day0.Add(time.Hour))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := s.Query(ctx, linkQuery("ns", day0, day0.Add(time.Hour)))
	g.Expect(err).To(MatchError(context.Canceled))
}
