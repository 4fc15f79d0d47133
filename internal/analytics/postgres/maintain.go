package postgres

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/kurz-dev/kurz/internal/analytics"
	"github.com/kurz-dev/kurz/internal/analytics/sqlplan"
)

// settle is how long after a UTC day ends Maintain waits before rolling it
// up: the writers' last flushes of the day arrive in the meantime. A later
// event of a rolled-up day bumps its seq, so the day is rolled up again.
const settle = 15 * time.Minute

// Maintain rolls up closed days and months, creates the coming days'
// partitions, applies the retentions (dropping whole partitions of raw
// events) and removes the analytics of links deleted more than
// DeleteGrace ago.
//
// Several replicas may call it at once: the first takes a session
// advisory lock for the whole run and the others return nil at once
// (nothing to do twice). Without the lock it would still be correct: every
// rollup is an idempotent upsert recomputed from raw events, and a day is
// marked rolled up with the seq read before its computation. A failure
// stops Maintain; the next call resumes.
func (s *Store) Maintain(ctx context.Context, now time.Time) error {
	conn, err := s.pool.Acquire(ctx)
	if err != nil {
		return fmt.Errorf("analytics maintain: %w", err)
	}
	defer conn.Release()
	var got bool
	if err := conn.QueryRow(ctx, "SELECT pg_try_advisory_lock($1)", maintainLock).Scan(&got); err != nil {
		return fmt.Errorf("analytics maintain: %w", err)
	}
	if !got {
		return nil // another replica is maintaining
	}
	defer func() {
		_, _ = conn.Exec(context.WithoutCancel(ctx), "SELECT pg_advisory_unlock($1)", maintainLock)
	}()
	for _, step := range []struct {
		name string
		f    func(context.Context, time.Time) error
	}{
		{"partitions", s.prepartition},
		{"rollups", s.rollDays},
		{"monthly rollups", s.rollMonths},
		{"monthly totals", s.rollMonthTotals},
		{"packing", s.pack},
		{"retention", s.retain},
		{"deleted links", s.forgetDeleted},
	} {
		if err := step.f(ctx, now); err != nil {
			return fmt.Errorf("analytics %s: %w", step.name, err)
		}
	}
	return nil
}

// mtx runs f in a transaction whose statements may take MaintainTimeout.
func (s *Store) mtx(ctx context.Context, f func(tx pgx.Tx) error) error {
	return pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, "SELECT set_config('statement_timeout', $1, true)", strconv.FormatInt(s.opts.MaintainTimeout.Milliseconds(), 10)); err != nil {
			return err
		}
		return f(tx)
	})
}

// prepartition creates today's and tomorrow's partitions, so that writes
// rarely create one.
func (s *Store) prepartition(ctx context.Context, now time.Time) error {
	s.mu.Lock() // the partition cache is Write's
	defer s.mu.Unlock()
	d := analytics.UnixDay(now)
	for _, day := range []int64{d, d + 1} {
		if err := s.ensurePartition(ctx, day); err != nil {
			return err
		}
	}
	return nil
}

func (s *Store) rawCut(ctx context.Context) (int64, error) {
	var c int64
	err := s.pool.QueryRow(ctx, "SELECT value FROM meta WHERE key = 'raw_cut'").Scan(&c)
	return c, err
}

// rollDays rolls up every closed, settled day from the oldest kept
// (rollups and raw events) whose rollups are not current.
func (s *Store) rollDays(ctx context.Context, now time.Time) error {
	rawCut, err := s.rawCut(ctx)
	if err != nil {
		return err
	}
	first := max(rawCut, s.retention().RollupFirstDay(now))
	last := now.Add(-settle).Unix()/86400 - 1 // the last closed, settled day
	rows, err := s.pool.Query(ctx, "SELECT day, seq FROM rolled_days WHERE rolled <> seq AND day >= $1 AND day <= $2 ORDER BY day", first, last)
	if err != nil {
		return err
	}
	todo, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (t [2]int64, err error) {
		err = r.Scan(&t[0], &t[1])
		return t, err
	})
	if err != nil {
		return err
	}
	for _, t := range todo {
		if err := s.rollDay(ctx, t[0], t[1]); err != nil {
			return fmt.Errorf("day %s: %w", time.Unix(t[0]*86400, 0).UTC().Format(time.DateOnly), err)
		}
	}
	return nil
}

// dimValues is a VALUES list of (dimension, value) over clients c and
// sources s: one row per dimension for each event row.
func dimValues() string {
	parts := make([]string, 0, len(analytics.Dimensions))
	for _, d := range analytics.Dimensions {
		parts = append(parts, fmt.Sprintf("(%d, %s::integer)", int(d), sqlplan.ValueExpr[d]))
	}
	return "(VALUES " + strings.Join(parts, ", ") + ") v(dim, value)"
}

// rollDay computes day d's rollups in one transaction from its partition,
// then records seq, read before, as rolled. A write of the day committed
// after that read bumped seq past it, so the day stays not rolled up and
// the next Maintain computes it again.
func (s *Store) rollDay(ctx context.Context, d, seq int64) error {
	bot := sqlplan.BotDevice
	return s.mtx(ctx, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `
INSERT INTO link_days (link, day, clicks, visitors, bot_clicks, bot_visitors, detail)
SELECT e.link, $1,
	coalesce(sum(`+eventClicks+`) FILTER (WHERE c.device <> $2), 0),
	count(DISTINCT nullif(e.visitor, 0)) FILTER (WHERE c.device <> $2),
	coalesce(sum(`+eventClicks+`) FILTER (WHERE c.device = $2), 0),
	count(DISTINCT nullif(e.visitor, 0)) FILTER (WHERE c.device = $2),
	sum(`+eventClicks+`) >= $3
FROM `+rawEvents("$1 * 1440", "($1 + 1) * 1440", nil)+` JOIN clients c ON c.id = e.client
GROUP BY e.link
ON CONFLICT (link, day) DO UPDATE SET clicks = excluded.clicks, visitors = excluded.visitors,
	bot_clicks = excluded.bot_clicks, bot_visitors = excluded.bot_visitors, detail = excluded.detail`,
			d, bot, s.opts.DetailThreshold); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `
INSERT INTO link_values (link, day, dims, vals, bots, clicks, visitors)
SELECT link, $1, array_agg(dim ORDER BY dim, value, bot), array_agg(value ORDER BY dim, value, bot), array_agg(bot ORDER BY dim, value, bot),
	array_agg(n ORDER BY dim, value, bot), array_agg(v ORDER BY dim, value, bot)
FROM (SELECT e.link, v.dim, v.value, c.device = $2 AS bot, sum(`+eventClicks+`)::integer AS n, count(DISTINCT nullif(e.visitor, 0))::integer AS v
FROM `+rawEvents("$1 * 1440", "($1 + 1) * 1440", nil)+` JOIN link_days ld ON ld.link = e.link AND ld.day = $1 AND ld.detail
JOIN clients c ON c.id = e.client JOIN sources s ON s.id = e.source
CROSS JOIN LATERAL `+dimValues()+`
GROUP BY e.link, v.dim, v.value, c.device = $2) x
GROUP BY link
ON CONFLICT (link, day) DO UPDATE SET dims = excluded.dims, vals = excluded.vals, bots = excluded.bots,
	clicks = excluded.clicks, visitors = excluded.visitors`, d, bot); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `
INSERT INTO ws_values (namespace, dim, day, vals, bots, clicks, visitors)
SELECT namespace, dim, $1, array_agg(value ORDER BY value, bot), array_agg(bot ORDER BY value, bot),
	array_agg(n ORDER BY value, bot), array_agg(v ORDER BY value, bot)
FROM (SELECT l.namespace, v.dim, v.value, c.device = $2 AS bot, sum(`+eventClicks+`)::integer AS n, count(DISTINCT nullif(e.visitor, 0))::integer AS v
FROM `+rawEvents("$1 * 1440", "($1 + 1) * 1440", nil)+` JOIN links l ON l.id = e.link
JOIN clients c ON c.id = e.client JOIN sources s ON s.id = e.source
CROSS JOIN LATERAL `+dimValues()+`
GROUP BY l.namespace, v.dim, v.value, c.device = $2) x
GROUP BY namespace, dim
ON CONFLICT (namespace, dim, day) DO UPDATE SET vals = excluded.vals, bots = excluded.bots,
	clicks = excluded.clicks, visitors = excluded.visitors`, d, bot); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, "UPDATE rolled_days SET rolled = $2 WHERE day = $1", d, seq)
		return err
	})
}

// rollMonths computes link_months of closed months none of whose raw
// events retention has dropped (a month is rolled up once it closes, long
// before its first day leaves the raw retention), unless current.
func (s *Store) rollMonths(ctx context.Context, now time.Time) error {
	rawCut, err := s.rawCut(ctx)
	if err != nil {
		return err
	}
	parts, err := s.partitionDays(ctx, s.pool)
	if err != nil || len(parts) == 0 {
		return err
	}
	cur := sqlplan.MonthOfDay(now.Add(-settle).Unix() / 86400)
	for m := sqlplan.MonthOfDay(parts[0]); m < cur; m++ {
		first, end := sqlplan.MonthStartDay(m), sqlplan.MonthStartDay(m+1)
		if first < rawCut {
			continue
		}
		var sig, rolled int64
		if err := s.pool.QueryRow(ctx, `SELECT coalesce((SELECT sum(seq) FROM rolled_days WHERE day >= $2 AND day < $3), 0)::bigint,
	coalesce((SELECT sig FROM rolled_months WHERE month = $1), -1)`, m, first, end).Scan(&sig, &rolled); err != nil {
			return err
		}
		if sig == 0 || sig == rolled {
			continue // nothing written that month, or current
		}
		if err := s.rollMonth(ctx, m, first, end, sig); err != nil {
			return fmt.Errorf("month %s: %w", time.Unix(first*86400, 0).UTC().Format("2006-01"), err)
		}
	}
	return nil
}

func (s *Store) rollMonth(ctx context.Context, m, first, end, sig int64) error {
	var lo, hi int64
	if err := s.pool.QueryRow(ctx, "SELECT coalesce(min(id), 0), coalesce(max(id), -1) FROM links").Scan(&lo, &hi); err != nil {
		return err
	}
	for a := lo; a <= hi; a += int64(s.opts.MaintainChunk) {
		if err := s.mtx(ctx, func(tx pgx.Tx) error {
			// Two transactions replacing the same rows would both insert
			// (each deletes what its snapshot sees): one at a time, should
			// two Maintains ever run at once.
			if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock($1)", monthsLock); err != nil {
				return err
			}
			if _, err := tx.Exec(ctx, "DELETE FROM link_months WHERE month = $1 AND link >= $2 AND link < $3",
				m, a, a+int64(s.opts.MaintainChunk)); err != nil {
				return err
			}
			_, err := tx.Exec(ctx, `
INSERT INTO link_months (link, month, clients, sources, clicks, visitors)
SELECT link, $1, array_agg(client ORDER BY client, source), array_agg(source ORDER BY client, source),
	array_agg(n ORDER BY client, source), array_agg(v ORDER BY client, source) FROM (
SELECT link, client, source, sum(n)::integer AS n, sum(v)::integer AS v FROM (
	SELECT e.link, e.client, e.source, e.minute / 1440, sum(`+eventClicks+`) AS n, count(DISTINCT nullif(e.visitor, 0)) AS v
	FROM `+rawEvents("$2", "$5", func(a string) string { return a + ".link >= $3 AND " + a + ".link < $4" })+`
	GROUP BY 1, 2, 3, 4) x
GROUP BY link, client, source) y
GROUP BY link`,
				m, first*1440, a, a+int64(s.opts.MaintainChunk), end*1440)
			return err
		}); err != nil {
			return err
		}
	}
	_, err := s.pool.Exec(ctx, `INSERT INTO rolled_months (month, first_day, end_day, sig) VALUES ($1, $2, $3, $4)
ON CONFLICT (month) DO UPDATE SET sig = excluded.sig`, m, first, end, sig)
	return err
}

// retain drops the partitions of raw events before the raw retention
// (never of a day not rolled up), and deletes rollups before the rollup
// retention and old batch ids.
func (s *Store) retain(ctx context.Context, now time.Time) error {
	oldCut, err := s.rawCut(ctx)
	if err != nil {
		return err
	}
	rawCut := s.retention().RawFirstDay(now)
	rollCut := s.retention().RollupFirstDay(now)
	// Never drop raw events of a day not rolled up (of the days rollups
	// are kept for).
	var unrolled *int64
	if err := s.pool.QueryRow(ctx, "SELECT min(day) FROM rolled_days WHERE rolled <> seq AND day >= $1 AND day < $2",
		max(oldCut, rollCut), rawCut).Scan(&unrolled); err != nil {
		return err
	}
	if unrolled != nil {
		rawCut = *unrolled
	}
	// raw_cut first: a write that reads it afterwards leaves those days
	// out instead of creating their partitions again.
	if _, err := s.pool.Exec(ctx, "UPDATE meta SET value = greatest(value, $1) WHERE key = 'raw_cut'", rawCut); err != nil {
		return err
	}
	parts, err := s.partitionDays(ctx, s.pool)
	if err != nil {
		return err
	}
	for _, d := range parts {
		if d >= rawCut {
			break
		}
		if err := s.dropPartition(ctx, d); err != nil {
			return fmt.Errorf("dropping %s: %w", partitionName(d), err)
		}
	}
	monthCut := sqlplan.MonthOfDay(rollCut)
	return s.mtx(ctx, func(tx pgx.Tx) error {
		for _, q := range []struct {
			sql string
			arg int64
		}{
			{"DELETE FROM link_days WHERE day < $1", rollCut},
			{"DELETE FROM link_values WHERE day < $1", rollCut},
			{"DELETE FROM ws_values WHERE day < $1", rollCut},
			{"DELETE FROM link_months WHERE month < $1", monthCut},
			{"DELETE FROM link_mtotals WHERE month <= $1", monthCut},
			{"DELETE FROM rolled_mtotals WHERE month <= $1", monthCut},
			// Days of a month still kept stay: a month's sig sums them.
			{"DELETE FROM rolled_days WHERE day < $1", sqlplan.MonthStartDay(monthCut)},
			{"DELETE FROM rolled_months WHERE month < $1", monthCut},
			{"DELETE FROM batches WHERE at < $1", now.Add(-s.opts.BatchMemory).Unix()},
		} {
			if _, err := tx.Exec(ctx, q.sql, q.arg); err != nil {
				return err
			}
		}
		return nil
	})
}

// forgetDeleted removes everything of links deleted more than DeleteGrace
// ago, MaintainChunk links per transaction, then the workspace rollups of
// namespaces left without links.
func (s *Store) forgetDeleted(ctx context.Context, now time.Time) error {
	rows, err := s.pool.Query(ctx, "SELECT id, namespace FROM links WHERE deleted_at IS NOT NULL AND deleted_at < $1 ORDER BY id", now.Add(-s.opts.DeleteGrace).Unix())
	if err != nil {
		return err
	}
	gone, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (t [2]int32, err error) {
		err = r.Scan(&t[0], &t[1])
		return t, err
	})
	if err != nil || len(gone) == 0 {
		return err
	}
	nss := map[int32]bool{}
	for len(gone) > 0 {
		n := min(len(gone), s.opts.MaintainChunk)
		ids := make([]int32, 0, n)
		for _, g := range gone[:n] {
			ids = append(ids, g[0])
			nss[g[1]] = true
		}
		gone = gone[n:]
		if err := s.mtx(ctx, func(tx pgx.Tx) error {
			for _, q := range []string{
				"DELETE FROM events WHERE link = ANY($1)",
				"DELETE FROM events_packed WHERE link = ANY($1)",
				"DELETE FROM link_days WHERE link = ANY($1)",
				"DELETE FROM link_values WHERE link = ANY($1)",
				"DELETE FROM link_months WHERE link = ANY($1)",
				"DELETE FROM links WHERE id = ANY($1)",
			} {
				if _, err := tx.Exec(ctx, q, ids); err != nil {
					return err
				}
			}
			return nil
		}); err != nil {
			return err
		}
	}
	s.mu.Lock()
	s.cache.reset() // this replica's writer may hold the links' ids
	s.mu.Unlock()
	list := make([]int32, 0, len(nss))
	for ns := range nss {
		list = append(list, ns)
	}
	_, err = s.pool.Exec(ctx, "DELETE FROM ws_values w WHERE namespace = ANY($1) AND NOT EXISTS (SELECT 1 FROM links l WHERE l.namespace = w.namespace)", list)
	return err
}

// rollMonthTotals sums link_days into link_mtotals for the closed months
// every day of which is rolled up and whose totals are not current. One
// REPEATABLE READ transaction per month: the days' seq it records as sig
// and the link_days it sums are of one snapshot, so a write or roll-up in
// between makes the totals stale (sig differs) rather than wrong.
func (s *Store) rollMonthTotals(ctx context.Context, now time.Time) error {
	cur := sqlplan.MonthOfDay(now.Add(-settle).Unix() / 86400)
	for m := sqlplan.MonthOfDay(s.retention().RollupFirstDay(now)) + 1; m < cur; m++ {
		first, end := sqlplan.MonthStartDay(m), sqlplan.MonthStartDay(m+1)
		err := pgx.BeginTxFunc(ctx, s.pool, pgx.TxOptions{IsoLevel: pgx.RepeatableRead}, func(tx pgx.Tx) error {
			if _, err := tx.Exec(ctx, "SELECT set_config('statement_timeout', $1, true)", strconv.FormatInt(s.opts.MaintainTimeout.Milliseconds(), 10)); err != nil {
				return err
			}
			var rolled, sig, have int64
			if err := tx.QueryRow(ctx, `SELECT count(*) FILTER (WHERE rolled = seq), coalesce(sum(seq), 0)::bigint,
	coalesce((SELECT sig FROM rolled_mtotals WHERE month = $1), -1)
FROM rolled_days WHERE day >= $2 AND day < $3`, m, first, end).Scan(&rolled, &sig, &have); err != nil {
				return err
			}
			if rolled != end-first || sig == have {
				return nil // a day not rolled up (queries read link_days), or current
			}
			if _, err := tx.Exec(ctx, "DELETE FROM link_mtotals WHERE month = $1", m); err != nil {
				return err
			}
			if _, err := tx.Exec(ctx, `INSERT INTO link_mtotals (link, month, clicks, visitors, bot_clicks, bot_visitors)
SELECT link, $1, sum(clicks), sum(visitors), sum(bot_clicks), sum(bot_visitors)
FROM link_days WHERE day >= $2 AND day < $3 GROUP BY link`, m, first, end); err != nil {
				return err
			}
			_, err := tx.Exec(ctx, `INSERT INTO rolled_mtotals (month, first_day, end_day, sig) VALUES ($1, $2, $3, $4)
ON CONFLICT (month) DO UPDATE SET sig = excluded.sig`, m, first, end, sig)
			return err
		})
		if err != nil {
			return fmt.Errorf("month %s: %w", time.Unix(first*86400, 0).UTC().Format("2006-01"), err)
		}
	}
	return nil
}
