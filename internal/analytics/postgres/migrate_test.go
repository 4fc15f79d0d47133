package postgres

import (
	"context"
	"strconv"
	"testing"
	"time"

	. "github.com/onsi/gomega"

	"github.com/kurz-dev/kurz/internal/analytics"
	"github.com/kurz-dev/kurz/internal/analytics/storetest"
	"github.com/kurz-dev/kurz/internal/testenv"
)

// A database written by schema version 2 (raw events keyed by day and
// minute of the day, clicks always stored) is migrated to the current
// schema with its events: the same answers before and after Maintain
// rolls them up, and new writes add to them.
func TestMigrateFromVersion2(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	o := options(testenv.Postgres(t), storetest.DefaultOptions())
	d := day0.Unix() / 86400
	seedVersion(t, o, 2, []string{
		"INSERT INTO strs (s) VALUES ('ns'), ('DE'), ('FR')",
		"INSERT INTO links (uid, namespace, name, domain, key) SELECT 'u1', id, 'l', 'example.com', 'k' FROM strs WHERE s = 'ns'",
		"INSERT INTO clients (device, os, browser, country) SELECT 1, 0, 0, id FROM strs WHERE s IN ('DE', 'FR') ORDER BY s",
		"INSERT INTO sources (referrer, utm_source, utm_medium, utm_campaign) VALUES (0, 0, 0, 0)",
		"CREATE TABLE events_d" + itoa(d) + " PARTITION OF events FOR VALUES FROM (" + itoa(d) + ") TO (" + itoa(d+1) + ")",
		// Two clicks of visitor 7 from DE at 01:00 (one row), one of
		// visitor 8 from FR at 01:01.
		`INSERT INTO events (day, link, minute, visitor, client, source, clicks)
SELECT ` + itoa(d) + `, l.id, 60, 7, c.id, s.id, 2 FROM links l, clients c, sources s, strs n WHERE c.country = n.id AND n.s = 'DE'
UNION ALL SELECT ` + itoa(d) + `, l.id, 61, 8, c.id, s.id, 1 FROM links l, clients c, sources s, strs n WHERE c.country = n.id AND n.s = 'FR'`,
		"INSERT INTO rolled_days (day) VALUES (" + itoa(d) + ")",
	})

	now := day0.Add(50 * time.Hour)
	s := openMigrated(t, o, now)
	var leftover bool
	g.Expect(s.pool.QueryRow(ctx, "SELECT to_regclass('events_v2') IS NOT NULL OR to_regclass('v2_events_d"+itoa(d)+"') IS NOT NULL").Scan(&leftover)).To(Succeed())
	g.Expect(leftover).To(BeFalse(), "the version-2 tables are dropped")

	byCountry := func() []analytics.Row {
		res, err := s.Query(ctx, analytics.Query{Namespace: "ns", Links: []string{"u1"}, GroupBy: analytics.GroupByCountry, Granularity: analytics.Day,
			Start: day0, End: day0.Add(24 * time.Hour), ExcludeBots: true})
		g.Expect(err).NotTo(HaveOccurred())
		for i := range res.Rows {
			res.Rows[i].Link = nil
		}
		return res.Rows
	}
	want := []analytics.Row{{Key: "DE", Clicks: 2, Visitors: 1}, {Key: "FR", Clicks: 1, Visitors: 1}}
	g.Expect(byCountry()).To(Equal(want), "from raw events")
	g.Expect(s.Maintain(ctx, now)).To(Succeed())
	g.Expect(byCountry()).To(Equal(want), "from the rollups")

	// A new write of the migrated day: raw events again (the day is no
	// longer rolled up), the old rows and the new summed.
	g.Expect(s.Write(ctx, analytics.Batch{ID: "b-1", Events: []analytics.Event{{Time: day0.Add(2 * time.Hour),
		Link: analytics.LinkRef{UID: "u1", Namespace: "ns", Name: "l", Domain: "example.com", Key: "k"}, Device: analytics.DeviceDesktop,
		Country: "DE", Visitor: 7, Clicks: 1}}})).To(Succeed())
	g.Expect(byCountry()).To(Equal([]analytics.Row{{Key: "DE", Clicks: 3, Visitors: 1}, {Key: "FR", Clicks: 1, Visitors: 1}}))
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// A version-3 database (clients without a city) with a day rolled up:
// after the migration, that day's clicks are of an unknown city from the
// raw events and from the rollups, and a new click with a city is its own
// row; the countries are those of both.
func TestMigrateFromVersion3(t *testing.T) {
	o := options(testenv.Postgres(t), storetest.DefaultOptions())
	d := day0.Unix() / 86400
	seedVersion(t, o, 3, []string{
		"INSERT INTO strs (id, s) VALUES (1, 'ns'), (2, 'DE')",
		"INSERT INTO links (id, uid, namespace, name, domain, key) VALUES (1, 'u1', 1, 'l', 'example.com', 'k')",
		"INSERT INTO clients (id, device, os, browser, country) VALUES (7, 1, 0, 0, 2)",
		"INSERT INTO sources (id, referrer, utm_source, utm_medium, utm_campaign) VALUES (1, 0, 0, 0, 0)",
		"CREATE TABLE events_d" + itoa(d) + " PARTITION OF events FOR VALUES FROM (" + itoa(d*1440) + ") TO (" + itoa((d+1)*1440) + ")",
		"INSERT INTO events (visitor, minute, link, client, source, clicks) VALUES (9, " + itoa(d*1440+60) + ", 1, 7, 1, 4)",
		// Version 3's rollups of the day, as its Maintain wrote them (the
		// link-day detailed).
		"INSERT INTO link_days (link, day, clicks, visitors, bot_clicks, bot_visitors, detail) VALUES (1, " + itoa(d) + ", 4, 1, 0, 0, true)",
		"INSERT INTO link_values (link, dim, day, value, bot, clicks, visitors) VALUES (1, 1, " + itoa(d) + ", 1, false, 4, 1), (1, 4, " + itoa(d) + ", 2, false, 4, 1)",
		"INSERT INTO ws_values (namespace, dim, day, value, bot, clicks, visitors) VALUES (1, 1, " + itoa(d) + ", 1, false, 4, 1), (1, 4, " + itoa(d) + ", 2, false, 4, 1)",
		"INSERT INTO rolled_days (day, seq, rolled) VALUES (" + itoa(d) + ", 1, 1)",
		// The ids above were given: the identities go on after them.
		"SELECT setval(pg_get_serial_sequence(t, 'id'), 100) FROM unnest(ARRAY['strs', 'links', 'clients', 'sources']) t",
	})

	now := day0.Add(50 * time.Hour)
	s := openMigrated(t, o, now)
	storetest.Version3Migrated(t, s, day0, now)
}

// openMigrated opens the store over a seeded database and checks that
// every migration ran.
func openMigrated(t *testing.T, o Options, now time.Time) *Store {
	t.Helper()
	s := openTest(t, o, now)
	var version int
	g := NewWithT(t)
	g.Expect(s.pool.QueryRow(context.Background(), "SELECT max(version) FROM schema_migrations").Scan(&version)).To(Succeed())
	g.Expect(version).To(Equal(len(migrations)))
	return s
}

// seedVersion makes a database of schema version, runs stmts in it (the
// rows that version's code would have written) and closes it.
func seedVersion(t *testing.T, o Options, version int, stmts []string) {
	t.Helper()
	g := NewWithT(t)
	ctx := context.Background()
	old, err := open(ctx, o, version)
	g.Expect(err).NotTo(HaveOccurred())
	for _, q := range stmts {
		_, err := old.pool.Exec(ctx, q)
		g.Expect(err).NotTo(HaveOccurred(), q)
	}
	g.Expect(old.Close()).To(Succeed())
}

// A version-4 database (one row per rollup value, raw rows only in
// events) with a day rolled up: after migration 5 its breakdowns are the
// same from the rollups (now a row per link-day and per namespace,
// dimension and day) and from the raw events; Maintain packs the day
// (events_packed, the day's events partition emptied) and the answers
// stay; a late click of the packed day is read from both forms, and the
// next Maintain rolls the day up again and packs the click too.
func TestMigrateFromVersion4(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	o := options(testenv.Postgres(t), storetest.DefaultOptions())
	o.DetailThreshold = 1 // every link-day has link_values rows, as seeded
	d := day0.Unix() / 86400
	seedVersion(t, o, 4, []string{
		"INSERT INTO strs (id, s) VALUES (1, 'ns'), (2, 'DE'), (3, 'FR')",
		"INSERT INTO links (id, uid, namespace, name, domain, key) VALUES (1, 'u1', 1, 'l', 'example.com', 'k')",
		"INSERT INTO clients (id, device, os, browser, country, city) VALUES (7, 1, 0, 0, 2, 0), (8, 1, 0, 0, 3, 0)",
		"INSERT INTO sources (id, referrer, utm_source, utm_medium, utm_campaign) VALUES (1, 0, 0, 0, 0)",
		"CREATE TABLE events_d" + itoa(d) + " PARTITION OF events FOR VALUES FROM (" + itoa(d*1440) + ") TO (" + itoa((d+1)*1440) + ")",
		// Visitor 9 clicked 4 times from DE at 01:00, visitor 10 once from FR at 01:05.
		"INSERT INTO events (visitor, minute, link, client, source, clicks) VALUES (9, " + itoa(d*1440+60) + ", 1, 7, 1, 4), (10, " + itoa(d*1440+65) + ", 1, 8, 1, NULL)",
		"INSERT INTO link_days (link, day, clicks, visitors, bot_clicks, bot_visitors, detail) VALUES (1, " + itoa(d) + ", 5, 2, 0, 0, true)",
		"INSERT INTO link_values (link, dim, day, value, bot, clicks, visitors) VALUES (1, 1, " + itoa(d) + ", 1, false, 5, 2), (1, 4, " + itoa(d) + ", 2, false, 4, 1), (1, 4, " + itoa(d) + ", 3, false, 1, 1)",
		"INSERT INTO ws_values (namespace, dim, day, value, bot, clicks, visitors) VALUES (1, 1, " + itoa(d) + ", 1, false, 5, 2), (1, 4, " + itoa(d) + ", 2, false, 4, 1), (1, 4, " + itoa(d) + ", 3, false, 1, 1)",
		"INSERT INTO rolled_days (day, seq, rolled) VALUES (" + itoa(d) + ", 1, 1)",
		"SELECT setval(pg_get_serial_sequence(t, 'id'), 100) FROM unnest(ARRAY['strs', 'links', 'clients', 'sources']) t",
	})

	now := day0.Add(50 * time.Hour)
	s := openMigrated(t, o, now)

	byCountry := func(src analytics.Source, links ...string) []analytics.Row {
		res, err := s.Query(ctx, analytics.Query{Namespace: "ns", Links: links, GroupBy: analytics.GroupByCountry, Granularity: analytics.Day,
			Start: day0, End: day0.Add(24 * time.Hour), Source: src})
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(res.Source).To(Equal(src))
		return res.Rows
	}
	check := func(want []analytics.Row, when string) {
		t.Helper()
		g.Expect(byCountry(analytics.SourceEvents)).To(Equal(want), "raw events, "+when)
		g.Expect(byCountry(analytics.SourceEvents, "u1")).To(Equal(want), "one link's raw events, "+when)
		g.Expect(byCountry(analytics.SourceRollups)).To(Equal(want), "the workspace's rollups, "+when)
		g.Expect(byCountry(analytics.SourceRollups, "u1")).To(Equal(want), "the link's rollups, "+when)
	}
	counts := func() (flat, packed int) {
		g.Expect(s.pool.QueryRow(ctx, "SELECT (SELECT count(*) FROM events), (SELECT count(*) FROM events_packed)").Scan(&flat, &packed)).To(Succeed())
		return flat, packed
	}
	want := []analytics.Row{{Key: "DE", Clicks: 4, Visitors: 1}, {Key: "FR", Clicks: 1, Visitors: 1}}
	check(want, "migrated")

	g.Expect(s.Maintain(ctx, now)).To(Succeed())
	flat, packed := counts()
	g.Expect([]int{flat, packed}).To(Equal([]int{0, 1}), "the day's two rows packed in one")
	check(want, "packed")

	g.Expect(s.Write(ctx, analytics.Batch{ID: "b-1", Events: []analytics.Event{{Time: day0.Add(3 * time.Hour),
		Link: analytics.LinkRef{UID: "u1", Namespace: "ns", Name: "l", Domain: "example.com", Key: "k"}, Device: analytics.DeviceDesktop,
		Country: "FR", Visitor: 10, Clicks: 2}}})).To(Succeed())
	want = []analytics.Row{{Key: "DE", Clicks: 4, Visitors: 1}, {Key: "FR", Clicks: 3, Visitors: 1}}
	g.Expect(byCountry(analytics.SourceEvents)).To(Equal(want), "a late click beside the packed day")
	g.Expect(byCountry(analytics.SourceEvents, "u1")).To(Equal(want), "a late click beside the packed day, one link")
	g.Expect(s.Maintain(ctx, now)).To(Succeed())
	flat, packed = counts()
	g.Expect([]int{flat, packed}).To(Equal([]int{0, 2}), "the late click packed too")
	check(want, "rolled up and packed again")
}
