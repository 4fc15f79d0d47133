package postgres

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/kurz-dev/kurz/internal/analytics"
	"github.com/kurz-dev/kurz/internal/analytics/sqlplan"
)

// Store is the PostgreSQL analytics store: every replica writes its
// batches to it and any replica answers queries from it.
type Store struct {
	opts Options
	pool *pgxpool.Pool

	// mu serialises Write (one writer goroutine per replica calls it; the
	// lock keeps a second caller from corrupting the caches).
	mu    sync.Mutex
	cache *dictCache
	// parts are the days whose events partition is known to exist.
	parts map[int64]bool

	// now is the clock that query routing and retention read (tests move it).
	now func() time.Time
}

var _ analytics.Store = (*Store)(nil)

// Open connects (within ctx and Options.ConnectTimeout) and migrates the
// database, once across replicas that open it together.
func Open(ctx context.Context, opts Options) (*Store, error) {
	return open(ctx, opts, len(migrations))
}

func open(ctx context.Context, opts Options, version int) (*Store, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	cfg, err := pgxpool.ParseConfig(opts.URL)
	if err != nil {
		// pgx's message repeats the string with its password masked.
		return nil, fmt.Errorf("analytics store: %w", err)
	}
	cfg.MaxConns = int32(opts.MaxConns)
	cfg.MinConns = 0
	cfg.MaxConnLifetime = 30 * time.Minute // a failover or a new replica behind a Service is picked up
	cfg.MaxConnIdleTime = 5 * time.Minute
	cfg.HealthCheckPeriod = 30 * time.Second
	cfg.ConnConfig.ConnectTimeout = opts.ConnectTimeout
	rp := cfg.ConnConfig.RuntimeParams
	if rp["application_name"] == "" {
		rp["application_name"] = "kurz-analytics"
	}
	rp["statement_timeout"] = strconv.FormatInt(opts.StatementTimeout.Milliseconds(), 10)
	// A session that died inside a transaction releases its locks soon.
	rp["idle_in_transaction_session_timeout"] = "60000"
	rp["timezone"] = "UTC"
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("analytics store %s: %w", Redacted(opts.URL), err)
	}
	if err := migrate(ctx, pool, version, opts.MaintainTimeout); err != nil {
		pool.Close()
		return nil, fmt.Errorf("analytics store %s: %w", Redacted(opts.URL), err)
	}
	s := &Store{opts: opts, pool: pool, cache: newDictCache(), parts: map[int64]bool{}, now: time.Now}
	return s, nil
}

// Close closes the pool, waiting for connections in use to be returned.
func (s *Store) Close() error {
	s.pool.Close()
	return nil
}

func (s *Store) retention() sqlplan.Retention {
	return sqlplan.Retention{Raw: s.opts.Retention, Rollup: s.opts.RollupRetention}
}

// Forget marks links deleted at; Maintain removes their analytics after
// Options.DeleteGrace.
func (s *Store) Forget(ctx context.Context, at time.Time, uids ...string) error {
	if len(uids) == 0 {
		return nil
	}
	if _, err := s.pool.Exec(ctx, "UPDATE links SET deleted_at = $1 WHERE uid = ANY($2) AND deleted_at IS NULL", at.Unix(), uids); err != nil {
		return fmt.Errorf("analytics forget: %w", err)
	}
	return nil
}
