package postgres

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
)

// packedName is the name of day d's partition of events_packed.
func packedName(d int64) string { return "events_packed_d" + strconv.FormatInt(d, 10) }

// packedCols turns an events_packed row p into event rows: unnest pads
// the clicks (NULL array or NULL elements) with NULL, which is 1.
const packedCols = `SELECT u.visitor, p.day * 1440 + u.m AS minute, p.link, u.client, u.source, u.clicks
	FROM events_packed p CROSS JOIN LATERAL unnest(p.visitors, p.minutes, p.clients, p.sources, p.clicks) AS u(visitor, m, client, source, clicks)`

// rawEvents is a FROM item, alias e, of the raw events of the unix minutes
// [lo, hi) (SQL expressions) in both forms: rows in events and packed rows
// of rolled-up days in events_packed (migration 5). flat and packed are
// further conditions on the link, as link(alias), for f (events) and p
// (events_packed). A day is in one form or both (late events of a packed
// day) and rows of both sum like rows of one.
func rawEvents(lo, hi string, link func(alias string) string) string {
	fc, pc := "", ""
	if link != nil {
		fc, pc = " AND "+link("f"), " AND "+link("p")
	}
	return `(SELECT f.visitor, f.minute, f.link, f.client, f.source, f.clicks FROM events f
	WHERE f.minute >= ` + lo + ` AND f.minute < ` + hi + fc + `
UNION ALL ` + packedCols + `
	WHERE p.day >= (` + lo + `) / 1440 AND p.day < ((` + hi + `) + 1439) / 1440` + pc + `
	AND p.day * 1440 + u.m >= ` + lo + ` AND p.day * 1440 + u.m < ` + hi + `) e`
}

// pack moves the rows of every closed, rolled-up day from events into
// events_packed, one statement a day (DELETE ... RETURNING feeding the
// INSERT, so a late event written meanwhile is either moved or left in
// events, never lost), then VACUUMs the day's partition so its file is
// truncated and rebuilds its (link) index, which VACUUM does not shrink.
// A reader's snapshot sees a day's rows in one form or the other, never
// both or neither. The days' seq is not bumped: the events are the same.
func (s *Store) pack(ctx context.Context, now time.Time) error {
	rawCut, err := s.rawCut(ctx)
	if err != nil {
		return err
	}
	last := now.Add(-settle).Unix()/86400 - 1
	parts, err := s.partitionDays(ctx, s.pool)
	if err != nil {
		return err
	}
	rolled, err := queryInts(ctx, s.pool, "SELECT day FROM rolled_days WHERE rolled = seq AND day >= $1 AND day <= $2", rawCut, last)
	if err != nil {
		return err
	}
	done := map[int64]bool{}
	for _, d := range rolled {
		done[d] = true
	}
	for _, d := range parts {
		if d > last || !done[d] {
			continue
		}
		var has bool
		if err := s.pool.QueryRow(ctx, "SELECT EXISTS (SELECT FROM "+partitionName(d)+")").Scan(&has); err != nil {
			return err
		}
		if !has {
			continue
		}
		if err := s.packDay(ctx, d); err != nil {
			return fmt.Errorf("day %s: %w", time.Unix(d*86400, 0).UTC().Format(time.DateOnly), err)
		}
	}
	return nil
}

func (s *Store) packDay(ctx context.Context, d int64) error {
	if err := s.ensurePacked(ctx, d); err != nil {
		return err
	}
	// Every array in the same order (the whole row as the key: rows equal
	// in it are interchangeable).
	const order = " ORDER BY minute, visitor, client, source, clicks"
	if err := s.mtx(ctx, func(tx pgx.Tx) error {
		_, err := tx.Exec(ctx, `WITH moved AS (DELETE FROM `+partitionName(d)+` RETURNING *)
INSERT INTO events_packed (link, day, minutes, visitors, clients, sources, clicks)
SELECT link, $1, array_agg((minute - $1 * 1440)::smallint`+order+`), array_agg(visitor`+order+`),
	array_agg(client`+order+`), array_agg(source`+order+`),
	CASE WHEN count(clicks) > 0 THEN array_agg(clicks`+order+`) END
FROM moved GROUP BY link`, int32(d))
		return err
	}); err != nil {
		return err
	}
	conn, err := s.pool.Acquire(ctx)
	if err != nil {
		return err
	}
	defer conn.Release()
	if _, err := conn.Exec(ctx, "SELECT set_config('statement_timeout', $1, false)", strconv.FormatInt(s.opts.MaintainTimeout.Milliseconds(), 10)); err != nil {
		return err
	}
	defer func() {
		if _, err := conn.Exec(context.WithoutCancel(ctx), "RESET statement_timeout"); err != nil {
			_ = conn.Conn().Close(context.WithoutCancel(ctx))
		}
	}()
	// Both outside a transaction; CONCURRENTLY so that writes and queries
	// of the day are not blocked while the index is rebuilt.
	rows, err := conn.Query(ctx, "SELECT indexrelid::regclass::text FROM pg_index WHERE indrelid = $1::regclass", partitionName(d))
	if err != nil {
		return err
	}
	idx, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return err
	}
	if _, err := conn.Exec(ctx, "VACUUM "+partitionName(d)); err != nil {
		return fmt.Errorf("vacuum: %w", err)
	}
	for _, i := range idx {
		if _, err := conn.Exec(ctx, "REINDEX INDEX CONCURRENTLY "+pgx.Identifier{strings.Trim(i, `"`)}.Sanitize()); err != nil {
			return fmt.Errorf("reindex: %w", err)
		}
	}
	return nil
}

// ensurePacked creates day d's partition of events_packed (only Maintain
// does, under its lock; the partition lock and lock timeout as for
// events).
func (s *Store) ensurePacked(ctx context.Context, d int64) error {
	return pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		var exists bool
		if err := tx.QueryRow(ctx, "SELECT to_regclass($1) IS NOT NULL", packedName(d)).Scan(&exists); err != nil || exists {
			return err
		}
		if _, err := tx.Exec(ctx, "SELECT set_config('lock_timeout', $1, true)", strconv.FormatInt(s.opts.LockTimeout.Milliseconds(), 10)); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock($1)", partitionLock); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, fmt.Sprintf("CREATE TABLE IF NOT EXISTS %s PARTITION OF events_packed FOR VALUES FROM (%d) TO (%d)", packedName(d), d, d+1))
		return err
	})
}
