package main

import (
	"context"
	"fmt"
	"os"
	"regexp"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/kurz-dev/kurz/internal/analytics"
	"github.com/kurz-dev/kurz/internal/analytics/postgres"
	"github.com/kurz-dev/kurz/internal/analytics/synth"
	"github.com/kurz-dev/kurz/internal/testenv"
)

// runPostgres is run for the PostgreSQL store: in the database at url, or
// (url empty) in a throwaway cluster started here and removed after.
func runPostgres(url string, clicks int64, links, days, batch, n int, seed uint64, only *regexp.Regexp) error {
	ctx := context.Background()
	if url == "" {
		srv, err := testenv.StartPostgres()
		if err != nil {
			return err
		}
		defer func() { _ = srv.Remove() }()
		if url, err = srv.CreateDB(ctx, "bench"); err != nil {
			return err
		}
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
	fmt.Fprintln(os.Stderr, "  queries (CPU columns are kurz's side only: the server does the work)")
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
	fmt.Printf("| table | rows | bytes (with indexes) |\n|---|---|---|\n")
	for _, t := range []string{"events", "link_days", "link_values", "ws_values", "link_months", "link_mtotals", "links", "strs", "clients", "sources", "batches"} {
		var rows, bytes int64
		if err := conn.QueryRow(ctx, "SELECT count(*) FROM "+t).Scan(&rows); err != nil {
			return err
		}
		if err := conn.QueryRow(ctx, "SELECT coalesce(sum(pg_total_relation_size(relid)), 0)::bigint FROM pg_partition_tree($1::regclass)", t).Scan(&bytes); err != nil {
			return err
		}
		fmt.Printf("| %s | %d | %.1f MB |\n", t, rows, float64(bytes)/1e6)
	}
	fmt.Println()
	return nil
}
