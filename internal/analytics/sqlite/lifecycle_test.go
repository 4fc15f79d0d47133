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
	"github.com/kurz-dev/kurz/internal/analytics/storetest"
)

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
}

// A version-3 database (clients without a city) with a day rolled up:
// after the migration, that day's clicks are of an unknown city from the
// raw events and from the rollups, the client ids events refer to are
// kept, and a new click with a city is its own row.
func TestMigratesVersion3Database(t *testing.T) {
	g := NewWithT(t)
	o := testOptions(t)
	ctx := context.Background()
	now := day0.AddDate(0, 0, 2)
	v3, err := open(ctx, o, 3)
	g.Expect(err).NotTo(HaveOccurred())
	for _, q := range []string{
		"INSERT INTO strs (id, s) VALUES (1, 'ns'), (2, 'DE')",
		"INSERT INTO links (id, uid, namespace, name, domain, key) VALUES (1, 'u1', 1, 'l', 'example.com', 'k')",
		"INSERT INTO clients (id, device, os, browser, country) VALUES (7, 1, 0, 0, 2)",
		"INSERT INTO sources (id, referrer, utm_source, utm_medium, utm_campaign) VALUES (1, 0, 0, 0, 0)",
		"INSERT INTO events (day, link, minute, visitor, client, source, clicks) VALUES (?1, 1, 60, 9, 7, 1, 4)",
		// Version 3's rollups of the day, as its Maintain wrote them (the
		// link-day detailed: DetailThreshold is 1 in tests).
		"INSERT INTO link_days (link, day, clicks, visitors, bot_clicks, bot_visitors, detail) VALUES (1, ?1, 4, 1, 0, 0, 1)",
		"INSERT INTO link_values (link, dim, day, value, bot, clicks, visitors) VALUES (1, 1, ?1, 1, 0, 4, 1), (1, 4, ?1, 2, 0, 4, 1)",
		"INSERT INTO ws_values (namespace, dim, day, value, bot, clicks, visitors) VALUES (1, 1, ?1, 1, 0, 4, 1), (1, 4, ?1, 2, 0, 4, 1)",
		"INSERT INTO rolled_days (day, done) VALUES (?1, 1)",
	} {
		_, err := v3.w.Exec(q, day0.Unix()/86400)
		g.Expect(err).NotTo(HaveOccurred(), q)
	}
	g.Expect(v3.Close()).To(Succeed())

	s := openTest(t, o, now)
	var version int
	g.Expect(s.w.QueryRow("PRAGMA user_version").Scan(&version)).To(Succeed())
	g.Expect(version).To(Equal(len(migrations)))
	storetest.Version3Migrated(t, s, day0, now)
}
