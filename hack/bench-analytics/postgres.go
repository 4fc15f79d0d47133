package main

import (
	"context"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/kurz-dev/kurz/internal/analytics"
	"github.com/kurz-dev/kurz/internal/analytics/postgres"
	"github.com/kurz-dev/kurz/internal/analytics/synth"
	"github.com/kurz-dev/kurz/internal/testenv"
)

// runPostgres is run for the PostgreSQL store: in the database at url, or
// (url empty) in a throwaway cluster started here and removed after.
func runPostgres(url string, queriesOnly bool, serverPid int, clicks int64, links, days, batch, n int, seed uint64, only *regexp.Regexp) error {
	ctx := context.Background()
	if url == "" {
		srv, err := testenv.StartPostgres()
		if err != nil {
			return err
		}
		defer func() { _ = srv.Remove() }()
		pid := srv.Pid()
		serverCPU = func() time.Duration { return treeCPU(pid) }
		if url, err = srv.CreateDB(ctx, "bench"); err != nil {
			return err
		}
	}
	if serverPid > 0 {
		serverCPU = func() time.Duration { return treeCPU(serverPid) }
	}
	opts := postgres.DefaultOptions()
	opts.URL = url
	s, err := postgres.Open(ctx, opts)
	if err != nil {
		return err
	}
	defer s.Close()
	now := time.Now().UTC()
	start := now.Truncate(24*time.Hour).AddDate(0, 0, -(days - 1))
	g := synth.New(synth.Config{Links: links, Clicks: clicks, Days: days, Start: start, Seed: seed})
	fmt.Printf("# bench-analytics: %d clicks over %d days in %d links (seed %d), PostgreSQL %s\n\n", clicks, days, links, seed, postgres.Redacted(url))
	if queriesOnly {
		return queries(ctx, s, g, n, seed, only)
	}
	// A second store on its own pool: two replicas writing.
	s2, err := postgres.Open(ctx, opts)
	if err != nil {
		return err
	}
	loaded, err := load(ctx, []analytics.Writer{s, s2}, g, now, batch)
	_ = s2.Close()
	if err != nil {
		return err
	}
	t0, c0 := time.Now(), processCPU()
	if err := s.Maintain(ctx, time.Now()); err != nil {
		return err
	}
	fmt.Printf("Maintain (rollups of %d days, retention): %s wall, %s CPU (kurz's side; the server's apart)\n\n", days, time.Since(t0).Round(time.Millisecond), (processCPU() - c0).Round(time.Millisecond))
	if err := pgSizes(ctx, url, loaded); err != nil {
		return err
	}
	if serverCPU == nil {
		fmt.Println("CPU columns: kurz's side only (the server's is not measured with -postgres-url)")
	} else {
		fmt.Println("CPU columns: kurz's thread plus the cluster's client backends (clock ticks: 10 ms resolution)")
	}
	return queries(ctx, s, g, n, seed, only)
}

// pgSizes prints the database's size after VACUUM and each table's
// (partitions summed, indexes and TOAST included).
func pgSizes(ctx context.Context, url string, clicks int64) error {
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "VACUUM ANALYZE"); err != nil {
		return err
	}
	var total int64
	if err := conn.QueryRow(ctx, "SELECT pg_database_size(current_database())").Scan(&total); err != nil {
		return err
	}
	fmt.Printf("| on disk | value |\n|---|---|\n| database (after VACUUM) | %.1f MB |\n| bytes per click | %.1f |\n\n", float64(total)/1e6, float64(total)/float64(max(clicks, 1)))
	fmt.Printf("| table | rows | bytes (with indexes) | B a click | heap | indexes | TOAST and maps | heap B a row |\n|---|---|---|---|---|---|---|---|\n")
	var tables []string
	rows, err := conn.Query(ctx, `SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE n.nspname = current_schema() AND c.relkind IN ('r', 'p') AND NOT c.relispartition ORDER BY 1`)
	if err != nil {
		return err
	}
	if tables, err = pgx.CollectRows(rows, pgx.RowTo[string]); err != nil {
		return err
	}
	for _, t := range tables {
		var n, total, heap, idx int64
		if err := conn.QueryRow(ctx, "SELECT count(*) FROM "+pgx.Identifier{t}.Sanitize()).Scan(&n); err != nil {
			return err
		}
		// The table itself, or its partitions summed (pg_partition_tree
		// is empty for a table that is not partitioned). The heap is the
		// main fork; the rest is TOAST and the free-space and visibility
		// maps.
		if err := conn.QueryRow(ctx, `WITH r AS (SELECT relid FROM pg_partition_tree($1::regclass) WHERE isleaf
	UNION ALL SELECT $1::regclass WHERE NOT EXISTS (SELECT FROM pg_partition_tree($1::regclass)))
SELECT sum(pg_total_relation_size(relid))::bigint, sum(pg_relation_size(relid))::bigint, sum(pg_indexes_size(relid))::bigint FROM r`,
			t).Scan(&total, &heap, &idx); err != nil {
			return err
		}
		perRow := 0.0
		if n > 0 {
			perRow = float64(heap) / float64(n)
		}
		fmt.Printf("| %s | %d | %.1f MB | %.1f | %.1f MB | %.1f MB | %.1f MB | %.1f |\n", t, n, float64(total)/1e6,
			float64(total)/float64(max(clicks, 1)), float64(heap)/1e6, float64(idx)/1e6, float64(total-heap-idx)/1e6, perRow)
	}
	fmt.Println()
	return nil
}

// treeCPU is the CPU time (user and system) of the client backends of
// the cluster whose postmaster is pid: the queries' work, without the
// background processes (autovacuum, checkpointer, WAL writer), whose CPU
// in the same moment is not the query's.
func treeCPU(pid int) time.Duration {
	var ticks int64
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		// Fields after the command's closing parenthesis: state ppid ... utime(12) stime(13).
		i := strings.LastIndexByte(string(b), ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(string(b[i+1:]))
		if len(f) < 13 {
			continue
		}
		self, _ := strconv.Atoi(e.Name())
		ppid, _ := strconv.Atoi(f[1])
		if self == pid || ppid != pid || !strings.HasPrefix(string(b[strings.IndexByte(string(b), '(')+1:]), "postgres") {
			continue
		}
		if cmd, err := os.ReadFile("/proc/" + e.Name() + "/cmdline"); err != nil || !strings.HasPrefix(string(cmd), "postgres: postgres bench ") {
			continue // not a client backend of the bench's database
		}
		u, _ := strconv.ParseInt(f[11], 10, 64)
		st, _ := strconv.ParseInt(f[12], 10, 64)
		ticks += u + st
	}
	return time.Duration(ticks) * 10 * time.Millisecond // USER_HZ is 100 on Linux
}
