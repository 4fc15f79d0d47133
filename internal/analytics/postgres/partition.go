package postgres

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
)

// partitionName is the name of day d's partition of events (its unix
// minutes d*1440 to (d+1)*1440).
func partitionName(d int64) string { return "events_d" + strconv.FormatInt(d, 10) }

// ensurePartition creates day d's partition unless this replica knows it
// exists. Creating a partition locks the events table exclusively for a
// moment, so it waits at most LockTimeout for running queries (the caller
// fails and retries later rather than queue every query behind it), and
// replicas serialise on an advisory lock so that two never race to create
// the same one. Maintain creates today's and tomorrow's ahead of time:
// Write creates one only for a late or early event, or a clock ahead.
func (s *Store) ensurePartition(ctx context.Context, d int64) error {
	if s.parts[d] {
		return nil
	}
	name := partitionName(d)
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		var exists bool
		if err := tx.QueryRow(ctx, "SELECT to_regclass($1) IS NOT NULL", name).Scan(&exists); err != nil || exists {
			return err
		}
		if _, err := tx.Exec(ctx, "SELECT set_config('lock_timeout', $1, true)", strconv.FormatInt(s.opts.LockTimeout.Milliseconds(), 10)); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock($1)", partitionLock); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, fmt.Sprintf("CREATE TABLE IF NOT EXISTS %s PARTITION OF events FOR VALUES FROM (%d) TO (%d)", name, d*1440, (d+1)*1440))
		return err
	})
	if err != nil {
		return fmt.Errorf("creating partition %s: %w", name, err)
	}
	s.parts[d] = true
	return nil
}

// partitionDays are the days of the partitions of events, ascending.
func (s *Store) partitionDays(ctx context.Context, q querier) ([]int64, error) {
	rows, err := q.Query(ctx, `SELECT c.relname FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
WHERE i.inhparent = 'events'::regclass ORDER BY 1`)
	if err != nil {
		return nil, err
	}
	names, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, err
	}
	var out []int64
	for _, n := range names {
		if d, err := strconv.ParseInt(strings.TrimPrefix(n, "events_d"), 10, 64); err == nil && strings.HasPrefix(n, "events_d") {
			out = append(out, d)
		}
	}
	slices.Sort(out)
	return out, nil
}

// dropPartition drops day d's partitions of events and events_packed
// (retention), waiting at most LockTimeout for the exclusive locks.
func (s *Store) dropPartition(ctx context.Context, d int64) error {
	return pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, "SELECT set_config('lock_timeout', $1, true)", strconv.FormatInt(s.opts.LockTimeout.Milliseconds(), 10)); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock($1)", partitionLock); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, "DROP TABLE IF EXISTS "+partitionName(d)+", "+packedName(d))
		return err
	})
}
