package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"strconv"
	"time"

	"github.com/kurz-dev/kurz/internal/analytics"
	"github.com/kurz-dev/kurz/internal/analytics/sqlplan"
)

// settle is how long after a UTC day ends Maintain waits before rolling it
// up: the writers' last flushes of the day arrive in the meantime. A later
// event of a rolled-up day marks it for another roll-up (Write).
const settle = 15 * time.Minute

// Maintain rolls up closed days and months, then applies the retentions
// and removes the analytics of links deleted more than DeleteGrace ago.
// Every step is idempotent and works in transactions of at most
// MaintainChunk links (or one namespace and dimension), so writes wait
// little; a failure stops Maintain and the next call resumes.
func (s *Store) Maintain(ctx context.Context, now time.Time) error {
	if err := s.rollDays(ctx, now); err != nil {
		return fmt.Errorf("analytics rollups: %w", err)
	}
	if err := s.rollMonths(ctx, now); err != nil {
		return fmt.Errorf("analytics monthly rollups: %w", err)
	}
	if err := s.rollMonthTotals(ctx, now); err != nil {
		return fmt.Errorf("analytics monthly totals: %w", err)
	}
	if err := s.retain(ctx, now); err != nil {
		return fmt.Errorf("analytics retention: %w", err)
	}
	if err := s.forgetDeleted(ctx, now); err != nil {
		return fmt.Errorf("analytics deleted links: %w", err)
	}
	return nil
}

func (s *Store) retention() sqlplan.Retention {
	return sqlplan.Retention{Raw: s.opts.Retention, Rollup: s.opts.RollupRetention}
}

func (s *Store) rawFirstDay(now time.Time) int64    { return s.retention().RawFirstDay(now) }
func (s *Store) rollupFirstDay(now time.Time) int64 { return s.retention().RollupFirstDay(now) }

// tx runs f in a write transaction under the writer's lock.
func (s *Store) tx(ctx context.Context, f func(tx *sql.Tx) error) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer func() { _ = tx.Rollback() }() // a no-op after Commit
	if err := f(tx); err != nil {
		return err
	}
	return tx.Commit()
}

// linkChunks are [lo, hi) ranges of link ids covering every link.
func (s *Store) linkChunks(ctx context.Context) ([][2]int64, error) {
	var lo, hi sql.NullInt64
	if err := s.w.QueryRowContext(ctx, "SELECT min(id), max(id) FROM links").Scan(&lo, &hi); err != nil {
		return nil, err
	}
	if !lo.Valid {
		return nil, nil
	}
	var out [][2]int64
	for a := lo.Int64; a <= hi.Int64; a += int64(s.opts.MaintainChunk) {
		out = append(out, [2]int64{a, a + int64(s.opts.MaintainChunk)})
	}
	return out, nil
}

// oldestDay is the day of the oldest raw event (the key's first column).
func (s *Store) oldestDay(ctx context.Context) (int64, bool, error) {
	var d sql.NullInt64
	err := s.w.QueryRowContext(ctx, "SELECT min(day) FROM events").Scan(&d)
	return d.Int64, d.Valid, err
}

func (s *Store) rollDays(ctx context.Context, now time.Time) error {
	oldest, ok, err := s.oldestDay(ctx)
	if err != nil || !ok {
		return err
	}
	first := max(oldest, s.rollupFirstDay(now))
	last := (now.Add(-settle).Unix())/86400 - 1 // the last closed, settled day
	done, err := s.doneSet(ctx, "SELECT day FROM rolled_days WHERE done AND day >= ? AND day <= ?", first, last)
	if err != nil {
		return err
	}
	chunks, err := s.linkChunks(ctx)
	if err != nil {
		return err
	}
	for d := first; d <= last; d++ {
		if _, ok := done[d]; ok {
			continue
		}
		if err := s.rollDay(ctx, d, chunks); err != nil {
			return fmt.Errorf("day %s: %w", time.Unix(d*86400, 0).UTC().Format(time.DateOnly), err)
		}
	}
	return nil
}

func (s *Store) doneSet(ctx context.Context, q string, args ...any) (map[int64]struct{}, error) {
	rows, err := s.w.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[int64]struct{}{}
	for rows.Next() {
		var d int64
		if err := rows.Scan(&d); err != nil {
			return nil, err
		}
		out[d] = struct{}{}
	}
	return out, rows.Err()
}

// rollDay computes day d's rollups. Its rolled_days row is written first
// (done = 0) and set done at the end only if it is still there: a Write of a
// late event for d in between deletes it, so d is rolled up again.
func (s *Store) rollDay(ctx context.Context, d int64, chunks [][2]int64) error {
	if err := s.tx(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, "DELETE FROM rolled_mtotals WHERE month = ?", sqlplan.MonthOfDay(d)); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, "INSERT OR REPLACE INTO rolled_days (day, done) VALUES (?, 0)", d)
		return err
	}); err != nil {
		return err
	}
	for _, c := range chunks {
		if err := s.tx(ctx, func(tx *sql.Tx) error {
			if _, err := tx.ExecContext(ctx, `
INSERT OR REPLACE INTO link_days (link, day, clicks, visitors, bot_clicks, bot_visitors, detail)
SELECT e.link, ?1,
	sum(CASE WHEN c.device <> ?2 THEN e.clicks ELSE 0 END),
	count(DISTINCT CASE WHEN c.device <> ?2 AND e.visitor <> 0 THEN e.visitor END),
	sum(CASE WHEN c.device = ?2 THEN e.clicks ELSE 0 END),
	count(DISTINCT CASE WHEN c.device = ?2 AND e.visitor <> 0 THEN e.visitor END),
	sum(e.clicks) >= ?3
FROM events e JOIN clients c ON c.id = e.client
WHERE e.day = ?1 AND e.link >= ?4 AND e.link < ?5
GROUP BY e.link`, d, sqlplan.BotDevice, s.opts.DetailThreshold, c[0], c[1]); err != nil {
				return err
			}
			for _, dim := range analytics.Dimensions {
				if _, err := tx.ExecContext(ctx, `
INSERT OR REPLACE INTO link_values (link, dim, day, value, bot, clicks, visitors)
SELECT e.link, ?3, ?1, `+sqlplan.ValueExpr[dim]+`, c.device = ?2, sum(e.clicks), count(DISTINCT nullif(e.visitor, 0))
FROM events e JOIN link_days ld ON ld.link = e.link AND ld.day = ?1 AND ld.detail
JOIN clients c ON c.id = e.client JOIN sources s ON s.id = e.source
WHERE e.day = ?1 AND e.link >= ?4 AND e.link < ?5
GROUP BY e.link, 4, 5`, d, sqlplan.BotDevice, int(dim), c[0], c[1]); err != nil {
					return err
				}
			}
			return nil
		}); err != nil {
			return err
		}
	}
	// One pass over the day per dimension, every namespace at once.
	for _, dim := range analytics.Dimensions {
		if err := s.tx(ctx, func(tx *sql.Tx) error {
			_, err := tx.ExecContext(ctx, `
INSERT OR REPLACE INTO ws_values (namespace, dim, day, value, bot, clicks, visitors)
SELECT l.namespace, ?3, ?1, `+sqlplan.ValueExpr[dim]+`, c.device = ?2, sum(e.clicks), count(DISTINCT nullif(e.visitor, 0))
FROM events e JOIN links l ON l.id = e.link
JOIN clients c ON c.id = e.client JOIN sources s ON s.id = e.source
WHERE e.day = ?1
GROUP BY l.namespace, 4, 5`, d, sqlplan.BotDevice, int(dim))
			return err
		}); err != nil {
			return err
		}
	}
	return s.tx(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, "UPDATE rolled_days SET done = 1 WHERE day = ?", d)
		return err
	})
}

// namespaces are the strs ids of the namespaces that have links.
func (s *Store) namespaces(ctx context.Context) ([]int64, error) {
	rows, err := s.w.QueryContext(ctx, "SELECT DISTINCT namespace FROM links")
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []int64
	for rows.Next() {
		var n int64
		if err := rows.Scan(&n); err != nil {
			return nil, err
		}
		out = append(out, n)
	}
	return out, rows.Err()
}

// rollMonths computes link_months of closed months none of whose raw
// events retention has deleted yet (a month is rolled up once it closes,
// long before its first day leaves the raw retention).
func (s *Store) rollMonths(ctx context.Context, now time.Time) error {
	oldest, ok, err := s.oldestDay(ctx)
	if err != nil || !ok {
		return err
	}
	cur := sqlplan.MonthOfDay(now.Add(-settle).Unix() / 86400)
	var rawCut int64
	if err := s.w.QueryRowContext(ctx, "SELECT value FROM meta WHERE key = 'raw_cut'").Scan(&rawCut); err != nil {
		return err
	}
	done, err := s.doneSet(ctx, "SELECT month FROM rolled_months WHERE done")
	if err != nil {
		return err
	}
	chunks, err := s.linkChunks(ctx)
	if err != nil {
		return err
	}
	for m := sqlplan.MonthOfDay(oldest); m < cur; m++ {
		if _, ok := done[m]; ok || sqlplan.MonthStartDay(m) < rawCut {
			continue
		}
		if err := s.rollMonth(ctx, m, chunks); err != nil {
			return err
		}
	}
	return nil
}

func (s *Store) rollMonth(ctx context.Context, m int64, chunks [][2]int64) error {
	days := dayList(sqlplan.MonthStartDay(m), sqlplan.MonthStartDay(m+1))
	if err := s.tx(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, "INSERT OR REPLACE INTO rolled_months (month, done) VALUES (?, 0)", m)
		return err
	}); err != nil {
		return err
	}
	for _, c := range chunks {
		if err := s.tx(ctx, func(tx *sql.Tx) error {
			_, err := tx.ExecContext(ctx, `
INSERT OR REPLACE INTO link_months (link, month, client, source, clicks, visitors)
SELECT link, ?1, client, source, sum(n), sum(v) FROM (
	SELECT e.link, e.client, e.source, e.day, sum(e.clicks) AS n, count(DISTINCT nullif(e.visitor, 0)) AS v
	FROM json_each(?2) d CROSS JOIN events e ON e.day = d.value AND e.link >= ?3 AND e.link < ?4
	GROUP BY e.link, e.client, e.source, e.day)
GROUP BY link, client, source`, m, days, c[0], c[1])
			return err
		}); err != nil {
			return err
		}
	}
	return s.tx(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, "UPDATE rolled_months SET done = 1 WHERE month = ?", m)
		return err
	})
}

// retain deletes raw events before the raw retention (only of days rolled
// up) and rollups before the rollup retention, link by link.
func (s *Store) retain(ctx context.Context, now time.Time) error {
	rawCut := s.rawFirstDay(now)
	// Never drop raw events of a day that is not rolled up.
	var unrolled sql.NullInt64
	if err := s.w.QueryRowContext(ctx, "SELECT min(day) FROM rolled_days WHERE NOT done").Scan(&unrolled); err != nil {
		return err
	}
	if unrolled.Valid && unrolled.Int64 < rawCut {
		rawCut = unrolled.Int64
	}
	rollCut := s.rollupFirstDay(now)
	oldest, ok, err := s.oldestDay(ctx)
	if err != nil {
		return err
	}
	for d := oldest; ok && d < rawCut; d++ { // a day per transaction: a key prefix
		if err := s.tx(ctx, func(tx *sql.Tx) error {
			_, err := tx.ExecContext(ctx, "DELETE FROM events WHERE day = ?", d)
			return err
		}); err != nil {
			return err
		}
	}
	chunks, err := s.linkChunks(ctx)
	if err != nil {
		return err
	}
	for _, c := range chunks {
		if err := s.tx(ctx, func(tx *sql.Tx) error {
			for _, q := range []struct {
				sql string
				cut int64
			}{
				{"DELETE FROM link_days WHERE link = ?1 AND day < ?2", rollCut},
				{"DELETE FROM link_values WHERE link = ?1 AND day < ?2", rollCut},
				{"DELETE FROM link_months WHERE link = ?1 AND month < ?2", sqlplan.MonthOfDay(rollCut)},
				{"DELETE FROM link_mtotals WHERE link = ?1 AND month < ?2", sqlplan.MonthOfDay(rollCut)},
			} {
				st, err := tx.PrepareContext(ctx, q.sql)
				if err != nil {
					return err
				}
				for id := c[0]; id < c[1]; id++ {
					if _, err := st.ExecContext(ctx, id, q.cut); err != nil {
						return err
					}
				}
			}
			return nil
		}); err != nil {
			return err
		}
	}
	namespaces, err := s.namespaces(ctx)
	if err != nil {
		return err
	}
	for _, ns := range namespaces {
		if err := s.tx(ctx, func(tx *sql.Tx) error {
			_, err := tx.ExecContext(ctx, "DELETE FROM ws_values WHERE namespace = ? AND day < ?", ns, rollCut)
			return err
		}); err != nil {
			return err
		}
	}
	return s.tx(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, "UPDATE meta SET value = max(value, ?) WHERE key = 'raw_cut'", rawCut); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, "DELETE FROM rolled_days WHERE day < ?", rollCut); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, "DELETE FROM rolled_months WHERE month < ?", sqlplan.MonthOfDay(rollCut)); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, "DELETE FROM rolled_mtotals WHERE month <= ?", sqlplan.MonthOfDay(rollCut)); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, "DELETE FROM batches WHERE at < ?", now.Add(-s.opts.BatchMemory).Unix())
		return err
	})
}

// dayList is the JSON array of the days [from, to).
func dayList(from, to int64) string {
	b := []byte{'['}
	for d := from; d < to; d++ {
		if d > from {
			b = append(b, ',')
		}
		b = strconv.AppendInt(b, d, 10)
	}
	return string(append(b, ']'))
}

// forgetDeleted removes everything of links deleted more than DeleteGrace
// ago, one link per transaction, then the workspace rollups of namespaces
// left without links.
func (s *Store) forgetDeleted(ctx context.Context, now time.Time) error {
	rows, err := s.w.QueryContext(ctx, "SELECT id, namespace FROM links WHERE deleted_at IS NOT NULL AND deleted_at < ?", now.Add(-s.opts.DeleteGrace).Unix())
	if err != nil {
		return err
	}
	var ids []int64
	nss := map[int64]struct{}{}
	for rows.Next() {
		var id, ns int64
		if err := rows.Scan(&id, &ns); err != nil {
			rows.Close()
			return err
		}
		ids = append(ids, id)
		nss[ns] = struct{}{}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	oldest, ok, err := s.oldestDay(ctx)
	if err != nil {
		return err
	}
	days := "[]"
	if ok {
		days = dayList(oldest, analytics.UnixDay(now)+2)
	}
	for _, id := range ids {
		if err := s.tx(ctx, func(tx *sql.Tx) error {
			if _, err := tx.ExecContext(ctx, "DELETE FROM events WHERE day IN (SELECT value FROM json_each(?)) AND link = ?", days, id); err != nil {
				return err
			}
			for _, q := range []string{
				"DELETE FROM link_days WHERE link = ?",
				"DELETE FROM link_values WHERE link = ?", "DELETE FROM link_months WHERE link = ?",
				"DELETE FROM link_mtotals WHERE link = ?",
				"DELETE FROM links WHERE id = ?",
			} {
				if _, err := tx.ExecContext(ctx, q, id); err != nil {
					return err
				}
			}
			s.cache.reset() // it may hold the link's id
			return nil
		}); err != nil {
			return err
		}
	}
	for ns := range nss {
		if err := s.tx(ctx, func(tx *sql.Tx) error {
			_, err := tx.ExecContext(ctx, "DELETE FROM ws_values WHERE namespace = ?1 AND NOT EXISTS (SELECT 1 FROM links WHERE namespace = ?1)", ns)
			return err
		}); err != nil {
			return err
		}
	}
	return nil
}

// rollMonthTotals sums link_days into link_mtotals for the closed months
// every day of which is rolled up and whose totals are not current, one
// transaction per month (a seek per link, about links × 31 rows read): a roll-up or late
// event in between would otherwise leave totals that no longer match.
func (s *Store) rollMonthTotals(ctx context.Context, now time.Time) error {
	cur := sqlplan.MonthOfDay(now.Add(-settle).Unix() / 86400)
	first := sqlplan.MonthOfDay(s.rollupFirstDay(now)) + 1 // whole months only
	current, err := s.doneSet(ctx, "SELECT month FROM rolled_mtotals")
	if err != nil {
		return err
	}
	for m := first; m < cur; m++ {
		if _, ok := current[m]; ok {
			continue
		}
		lo, hi := sqlplan.MonthStartDay(m), sqlplan.MonthStartDay(m+1)
		if err := s.tx(ctx, func(tx *sql.Tx) error {
			var done int64
			if err := tx.QueryRowContext(ctx, "SELECT count(*) FROM rolled_days WHERE done AND day >= ? AND day < ?", lo, hi).Scan(&done); err != nil {
				return err
			}
			if done != hi-lo {
				return nil // not every day rolled up (yet): queries read link_days
			}
			if _, err := tx.ExecContext(ctx, "DELETE FROM link_mtotals WHERE month = ?", m); err != nil {
				return err
			}
			if _, err := tx.ExecContext(ctx, `
INSERT INTO link_mtotals (link, month, clicks, visitors, bot_clicks, bot_visitors)
SELECT l.id, ?1, sum(ld.clicks), sum(ld.visitors), sum(ld.bot_clicks), sum(ld.bot_visitors)
FROM links l CROSS JOIN link_days ld ON ld.link = l.id AND ld.day >= ?2 AND ld.day < ?3 GROUP BY l.id`, m, lo, hi); err != nil {
				return err
			}
			_, err := tx.ExecContext(ctx, "INSERT INTO rolled_mtotals (month) VALUES (?)", m)
			return err
		}); err != nil {
			return err
		}
	}
	return nil
}
