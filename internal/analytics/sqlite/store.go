package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"sync"
	"time"

	_ "modernc.org/sqlite" // the pure-Go driver, "sqlite"

	"github.com/kurz-dev/kurz/internal/analytics"
)

// Store is the SQLite analytics store. Write and Maintain share one writer
// connection (SQLite has one writer at a time anyway); queries use a small
// pool of read connections, which WAL lets run beside the writer.
type Store struct {
	opts Options
	w    *sql.DB // one connection
	r    *sql.DB // ReadConns connections, query_only

	// mu serialises the users of the writer's caches: Write and Maintain.
	mu    sync.Mutex
	cache *dictCache

	// now is the clock that query routing and retention read (tests move it).
	now func() time.Time
}

var _ analytics.Store = (*Store)(nil)

// Open opens (creating it if needed) and migrates the database at
// opts.Path.
func Open(ctx context.Context, opts Options) (*Store, error) {
	return open(ctx, opts, len(migrations))
}

// open migrates to version (tests open older schemas).
func open(ctx context.Context, opts Options, version int) (*Store, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	busy := opts.BusyTimeout.Milliseconds()
	dsn := func(extra ...string) string {
		q := url.Values{}
		q.Add("_pragma", fmt.Sprintf("busy_timeout(%d)", busy))
		q.Add("_pragma", "journal_mode(WAL)")
		// NORMAL in WAL mode: a power cut may lose the last transactions but
		// never corrupts; what a writer lost it has counted as dropped.
		q.Add("_pragma", "synchronous(NORMAL)")
		q.Add("_pragma", "cache_size(-32000)") // 32 MB of pages per connection
		q.Add("_pragma", "temp_store(MEMORY)")
		for _, p := range extra {
			q.Add("_pragma", p)
		}
		q.Set("_txlock", "immediate") // writers take the lock at BEGIN, not mid-transaction
		return "file:" + opts.Path + "?" + q.Encode()
	}
	w, err := sql.Open("sqlite", dsn())
	if err != nil {
		return nil, fmt.Errorf("opening analytics store %s: %w", opts.Path, err)
	}
	w.SetMaxOpenConns(1)
	w.SetMaxIdleConns(1)
	w.SetConnMaxLifetime(0)
	w.SetConnMaxIdleTime(0)
	if err := migrate(ctx, w, version); err != nil {
		w.Close()
		return nil, fmt.Errorf("analytics store %s: %w", opts.Path, err)
	}
	r, err := sql.Open("sqlite", dsn("query_only(1)"))
	if err != nil {
		w.Close()
		return nil, fmt.Errorf("opening analytics store %s: %w", opts.Path, err)
	}
	r.SetMaxOpenConns(opts.ReadConns)
	r.SetMaxIdleConns(opts.ReadConns)
	r.SetConnMaxIdleTime(0)
	if err := r.PingContext(ctx); err != nil {
		w.Close()
		r.Close()
		return nil, fmt.Errorf("analytics store %s: %w", opts.Path, err)
	}
	return &Store{opts: opts, w: w, r: r, cache: newDictCache(), now: time.Now}, nil
}

// Close closes the connections; a checkpoint folds the WAL into the file.
func (s *Store) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, _ = s.w.Exec("PRAGMA wal_checkpoint(TRUNCATE)")
	return errors.Join(s.r.Close(), s.w.Close())
}

// Forget marks links deleted at; Maintain removes their analytics after
// Options.DeleteGrace.
func (s *Store) Forget(ctx context.Context, at time.Time, uids ...string) error {
	if len(uids) == 0 {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("analytics forget: %w", err)
	}
	defer func() { _ = tx.Rollback() }() // a no-op after Commit
	st, err := tx.PrepareContext(ctx, "UPDATE links SET deleted_at = ? WHERE uid = ? AND deleted_at IS NULL")
	if err != nil {
		return fmt.Errorf("analytics forget: %w", err)
	}
	for _, u := range uids {
		if _, err := st.ExecContext(ctx, at.Unix(), u); err != nil {
			return fmt.Errorf("analytics forget %s: %w", u, err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("analytics forget: %w", err)
	}
	return nil
}
