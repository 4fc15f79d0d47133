package postgres

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	. "github.com/onsi/gomega"

	"github.com/kurz-dev/kurz/internal/analytics"
	"github.com/kurz-dev/kurz/internal/analytics/storetest"
	"github.com/kurz-dev/kurz/internal/analytics/synth"
	"github.com/kurz-dev/kurz/internal/testenv"
)

// Replicas starting together migrate once: without the advisory lock,
// concurrent CREATE TABLEs fail on each other.
func TestConcurrentOpenMigratesOnce(t *testing.T) {
	g := NewWithT(t)
	url := testenv.Postgres(t)
	const n = 6
	errs := make(chan error, n)
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			s, err := Open(context.Background(), options(url, storetest.DefaultOptions()))
			if err == nil {
				s.Close()
			}
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		g.Expect(err).NotTo(HaveOccurred())
	}
	s := openTest(t, options(url, storetest.DefaultOptions()), day0)
	var versions []int
	rows, err := s.pool.Query(context.Background(), "SELECT version FROM schema_migrations ORDER BY version")
	g.Expect(err).NotTo(HaveOccurred())
	for rows.Next() {
		var v int
		g.Expect(rows.Scan(&v)).To(Succeed())
		versions = append(versions, v)
	}
	g.Expect(versions).To(HaveLen(len(migrations)))
}

func TestRefusesNewerSchema(t *testing.T) {
	g := NewWithT(t)
	url := testenv.Postgres(t)
	s := openTest(t, options(url, storetest.DefaultOptions()), day0)
	_, err := s.pool.Exec(context.Background(), "INSERT INTO schema_migrations (version) VALUES (99)")
	g.Expect(err).NotTo(HaveOccurred())
	_, err = Open(context.Background(), options(url, storetest.DefaultOptions()))
	g.Expect(err).To(MatchError(ContainSubstring("schema version 99")))
}

// Two replicas write the same days, links and new dimension values at
// once, while both run Maintain: every click is counted once, and the
// rollups end up what a brute force says.
func TestTwoWritersAddUp(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	url := testenv.Postgres(t)
	gen := synth.New(synth.Config{Links: 200, Namespaces: 2, Clicks: 40000, Days: 4, Start: day0, Seed: 21})
	now := day0.AddDate(0, 0, 3).Add(12 * time.Hour)
	o := options(url, storetest.DefaultOptions())
	a, b := openTest(t, o, now), openTest(t, o, now)
	// Every second batch to each replica: both see every link and value.
	var batches [2][]analytics.Batch
	agg := analytics.NewAggregator(500)
	var all []analytics.Event
	seq := 0
	take := func() {
		bt := agg.Take(fmt.Sprintf("w%d-%d", seq%2, seq))
		all = append(all, bt.Events...)
		batches[seq%2] = append(batches[seq%2], bt)
		seq++
	}
	for d := range 4 {
		gen.Day(d, func(e *analytics.Event) {
			agg.Add(*e)
			if agg.Len() >= 500 {
				take()
			}
		})
	}
	take()
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for i, s := range []*Store{a, b} {
		wg.Go(func() {
			for j, bt := range batches[i] {
				if err := s.Write(ctx, bt); err != nil {
					errs <- err
					return
				}
				if j%20 == 10 { // Maintain while the other writes, as replicas do
					if err := s.Maintain(ctx, now); err != nil {
						errs <- err
						return
					}
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		g.Expect(err).NotTo(HaveOccurred())
	}
	// Retries of applied batches change nothing.
	g.Expect(b.Write(ctx, batches[0][0])).To(Succeed())
	g.Expect(a.Maintain(ctx, now)).To(Succeed())
	for _, gb := range []analytics.GroupBy{analytics.GroupByTimeseries, analytics.GroupByLink, analytics.GroupByCountry, analytics.GroupByReferrer} {
		for _, src := range []analytics.Source{analytics.SourceEvents, analytics.SourceRollups} {
			q := analytics.Query{Namespace: "team-1", GroupBy: gb, Granularity: analytics.Day, Start: day0, End: now, Source: src}
			res, err := b.Query(ctx, q)
			g.Expect(err).NotTo(HaveOccurred())
			want := storetest.Brute(all, q, res.Start, res.End, res.Location)
			g.Expect(cmp.Diff(want, res.Rows, cmpopts.EquateEmpty(), cmp.Comparer(func(x, y time.Time) bool { return x.Equal(y) }))).To(BeEmpty(), "%s from %s", gb, src)
		}
	}
}

// Maintain on several replicas at once: one does the work, the others
// return at once; the result is what one Maintain gives.
func TestMaintainConcurrently(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	url := testenv.Postgres(t)
	gen := synth.New(synth.Config{Links: 50, Clicks: 10000, Days: 5, Start: day0, Seed: 4})
	now := day0.AddDate(0, 0, 5).Add(time.Hour)
	o := options(url, storetest.DefaultOptions())
	stores := []*Store{openTest(t, o, now), openTest(t, o, now), openTest(t, o, now)}
	events := storetest.Load(t, stores[0], gen, 5)
	var wg sync.WaitGroup
	errs := make(chan error, len(stores))
	for _, s := range stores {
		wg.Go(func() { errs <- s.Maintain(ctx, now) })
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		g.Expect(err).NotTo(HaveOccurred())
	}
	g.Expect(stores[1].Maintain(ctx, now)).To(Succeed()) // whatever the others skipped
	var notRolled int
	g.Expect(stores[0].pool.QueryRow(ctx, "SELECT count(*) FROM rolled_days WHERE rolled <> seq AND day < $1", analytics.UnixDay(now)).Scan(&notRolled)).To(Succeed())
	g.Expect(notRolled).To(BeZero())
	q := analytics.Query{Namespace: "team-0", GroupBy: analytics.GroupByLink, Granularity: analytics.Day, Start: day0, End: now, Source: analytics.SourceRollups}
	res, err := stores[2].Query(ctx, q)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(res.Rows).To(Equal(storetest.Brute(events, q, res.Start, res.End, time.UTC)))
}
