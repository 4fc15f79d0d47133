package postgres

import (
	"context"
	"net"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"

	"github.com/kurz-dev/kurz/internal/analytics"
	"github.com/kurz-dev/kurz/internal/analytics/storetest"
	"github.com/kurz-dev/kurz/internal/testenv"
)

func oneEvent(id string, at time.Time) analytics.Batch {
	return analytics.Batch{ID: id, Events: []analytics.Event{{Time: at, Link: analytics.LinkRef{UID: "u1", Namespace: "ns"}, Visitor: 1, Clicks: 1}}}
}

// within runs f and fails t unless it returns within d (a store that
// waits past its ctx would block the writer goroutine).
func within(t *testing.T, d time.Duration, f func() error) error {
	t.Helper()
	done := make(chan error, 1)
	start := time.Now()
	go func() { done <- f() }()
	select {
	case err := <-done:
		t.Logf("returned after %s: %v", time.Since(start).Round(time.Millisecond), err)
		return err
	case <-time.After(d):
		t.Fatalf("still waiting after %s", d)
		return nil
	}
}

// The database stopped under a running store: writes and queries fail
// within their ctx, and once it is back the same store goes on.
func TestDatabaseDownAndBack(t *testing.T) {
	g := NewWithT(t)
	srv := testenv.NewPostgres(t)
	now := day0.Add(time.Hour)
	at := now.Add(-time.Minute) // inside the queries' [start, now)
	o := options(srv.CreateDatabase(t), storetest.DefaultOptions())
	s := openTest(t, o, now)
	g.Expect(s.Write(context.Background(), oneEvent("w-1", at))).To(Succeed())
	g.Expect(srv.Stop()).To(Succeed())

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	g.Expect(within(t, 20*time.Second, func() error { return s.Write(ctx, oneEvent("w-2", at)) })).To(HaveOccurred())
	ctx2, cancel2 := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel2()
	g.Expect(within(t, 20*time.Second, func() error {
		_, err := s.Query(ctx2, analytics.Query{Namespace: "ns", GroupBy: analytics.GroupByLink, Granularity: analytics.Day, Start: day0, End: now})
		return err
	})).To(HaveOccurred())

	g.Expect(srv.Start()).To(Succeed())
	// The pool replaces its broken connections: the retried batch and a
	// new one are stored, once each.
	g.Eventually(func() error { return s.Write(context.Background(), oneEvent("w-2", at)) }).WithTimeout(30 * time.Second).Should(Succeed())
	g.Expect(s.Write(context.Background(), oneEvent("w-2", at))).To(Succeed())
	res, err := s.Query(context.Background(), analytics.Query{Namespace: "ns", GroupBy: analytics.GroupByLink, Granularity: analytics.Day, Start: day0, End: now})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(res.Rows).To(HaveLen(1))
	g.Expect(res.Rows[0].Clicks).To(Equal(int64(2)))
}

// A server that accepts connections and never answers (a hung database,
// a black-holed proxy): Open fails within ConnectTimeout, not never.
func TestStalledServerFailsOpen(t *testing.T) {
	g := NewWithT(t)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	g.Expect(err).NotTo(HaveOccurred())
	defer l.Close()
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			defer c.Close() // held open, never answered
		}
	}()
	o := DefaultOptions()
	o.URL = "postgres://kurz:hunter2@" + l.Addr().String() + "/analytics?sslmode=disable"
	o.ConnectTimeout = time.Second
	err = within(t, 20*time.Second, func() error {
		_, err := Open(context.Background(), o)
		return err
	})
	g.Expect(err).To(HaveOccurred())
	g.Expect(err.Error()).NotTo(ContainSubstring("hunter2"))
}

// Another session holds the events table locked (a long migration by
// hand, a stuck DDL): a write fails within its ctx, and goes through once
// the lock is gone.
func TestLockedTableFailsWithinContext(t *testing.T) {
	g := NewWithT(t)
	url := testenv.Postgres(t)
	now := day0.Add(time.Hour)
	s := openTest(t, options(url, storetest.DefaultOptions()), now)
	g.Expect(s.Write(context.Background(), oneEvent("w-1", now))).To(Succeed())
	other := openTest(t, options(url, storetest.DefaultOptions()), now)
	tx, err := other.pool.Begin(context.Background())
	g.Expect(err).NotTo(HaveOccurred())
	_, err = tx.Exec(context.Background(), "LOCK TABLE events IN ACCESS EXCLUSIVE MODE")
	g.Expect(err).NotTo(HaveOccurred())

	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	err = within(t, 20*time.Second, func() error { return s.Write(ctx, oneEvent("w-2", now)) })
	g.Expect(err).To(MatchError(context.DeadlineExceeded))
	g.Expect(tx.Rollback(context.Background())).To(Succeed())
	g.Expect(s.Write(context.Background(), oneEvent("w-2", now))).To(Succeed())
}

func TestStatementTimeoutIsTheServers(t *testing.T) {
	g := NewWithT(t)
	o := options(testenv.Postgres(t), storetest.DefaultOptions())
	o.StatementTimeout = 100 * time.Millisecond
	s := openTest(t, o, day0)
	_, err := s.pool.Exec(context.Background(), "SELECT pg_sleep(5)")
	g.Expect(err).To(MatchError(ContainSubstring("statement timeout")))
}

// Retention drops whole partitions; a late event for a dropped day is left
// out rather than re-creating its partition or touching its rollups.
func TestRetentionDropsPartitions(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	now := day0.AddDate(0, 0, 10).Add(time.Hour)
	s := openTest(t, options(testenv.Postgres(t), storetest.RetentionOptions()), now)
	for d := range 10 {
		g.Expect(s.Write(ctx, oneEvent("w-"+string(rune('a'+d)), day0.AddDate(0, 0, d).Add(time.Hour)))).To(Succeed())
	}
	g.Expect(s.Maintain(ctx, now)).To(Succeed())
	days, err := s.partitionDays(ctx, s.pool)
	g.Expect(err).NotTo(HaveOccurred())
	today := analytics.UnixDay(now)
	// Raw events from day 8 on; today's and tomorrow's made ahead.
	g.Expect(days).To(Equal([]int64{today - 2, today - 1, today, today + 1}))

	q := analytics.Query{Namespace: "ns", GroupBy: analytics.GroupByLink, Granularity: analytics.Day, Start: day0.AddDate(0, 0, 5), End: now, Source: analytics.SourceRollups}
	before, err := s.Query(ctx, q)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(before.Rows[0].Clicks).To(Equal(int64(5))) // days 5 to 9
	g.Expect(s.Write(ctx, oneEvent("late", day0.AddDate(0, 0, 6).Add(2*time.Hour)))).To(Succeed())
	g.Expect(s.Maintain(ctx, now)).To(Succeed())
	after, err := s.Query(ctx, q)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(after.Rows).To(Equal(before.Rows))
	days, err = s.partitionDays(ctx, s.pool)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(days[0]).To(Equal(today - 2))
}

func TestRedacted(t *testing.T) {
	g := NewWithT(t)
	g.Expect(Redacted("postgres://kurz:hunter2@db:5432/a?sslmode=require")).To(Equal("postgres://kurz:xxxxx@db:5432/a?sslmode=require"))
	g.Expect(Redacted("postgres://db/a?password=hunter2")).NotTo(ContainSubstring("hunter2"))
	g.Expect(Redacted("host=db password=hunter2")).To(Equal("(connection string)"))
	g.Expect(IsURL("postgresql://db/a")).To(BeTrue())
	g.Expect(IsURL("/var/lib/kurz/analytics.db")).To(BeFalse())
	o := DefaultOptions()
	o.URL = "postgres://kurz:hunter2@db/a"
	o.MaxConns = 0
	err := o.Validate()
	g.Expect(err).To(MatchError(ContainSubstring("max connections")))
	g.Expect(strings.Contains(err.Error(), "hunter2")).To(BeFalse())
}
