package postgres

import (
	"errors"
	"fmt"
	"net/url"
	"time"

	"github.com/kurz-dev/kurz/internal/analytics/sqlplan"
)

// Options configure a Store. Start from DefaultOptions.
type Options struct {
	// URL is the database's connection string (postgres://user:password@host/db?sslmode=...,
	// or libpq's key=value form). It holds a password: never log it
	// (Redacted does not).
	URL string
	// Retention, RollupRetention, DeleteGrace, DetailThreshold and
	// BatchMemory mean what they mean for the SQLite store.
	Retention       time.Duration
	RollupRetention time.Duration
	DeleteGrace     time.Duration
	DetailThreshold int
	BatchMemory     time.Duration
	// MaxConns bounds this replica's connections (writes use one at a
	// time, queries and Maintain the rest): replicas × MaxConns must fit
	// the server's max_connections with room for everyone else.
	MaxConns int
	// ConnectTimeout bounds one connection attempt (a dead or unreachable
	// server fails a Write within it, or within the Write's ctx).
	ConnectTimeout time.Duration
	// StatementTimeout is the server's statement_timeout for this store's
	// sessions: a query the server runs longer is cancelled by the server
	// itself, even when the client is gone. Maintain's statements get
	// MaintainTimeout instead.
	StatementTimeout time.Duration
	// MaintainTimeout is the statement timeout of Maintain's statements
	// (a day's rollups, a month's chunk, dropping a partition).
	MaintainTimeout time.Duration
	// LockTimeout bounds how long creating or dropping a partition waits
	// for the lock on the events table (queries hold it in share mode);
	// Write and Maintain retry later instead of queueing every query
	// behind them.
	LockTimeout time.Duration
	// MaintainChunk is how many links one monthly rollup or deletion
	// statement covers.
	MaintainChunk int
}

// DefaultOptions returns every default.
func DefaultOptions() Options {
	return Options{
		Retention:        90 * 24 * time.Hour,
		RollupRetention:  2 * 365 * 24 * time.Hour,
		DeleteGrace:      7 * 24 * time.Hour,
		DetailThreshold:  200,
		BatchMemory:      3 * 24 * time.Hour,
		MaxConns:         4,
		ConnectTimeout:   5 * time.Second,
		StatementTimeout: 30 * time.Second,
		MaintainTimeout:  10 * time.Minute,
		LockTimeout:      5 * time.Second,
		MaintainChunk:    1000,
	}
}

// Validate refuses impossible values, naming the flag or field; it never
// repeats the URL (it may hold a password).
func (o Options) Validate() error {
	var errs []error
	if o.URL == "" {
		errs = append(errs, errors.New("analytics store: the PostgreSQL URL is empty"))
	}
	errs = append(errs, sqlplan.CheckRetention(o.Retention, o.RollupRetention, o.DeleteGrace)...)
	if o.DetailThreshold < 1 {
		errs = append(errs, fmt.Errorf("analytics store: detail threshold %d below 1", o.DetailThreshold))
	}
	if o.BatchMemory < time.Hour {
		errs = append(errs, fmt.Errorf("analytics store: batch memory %s below 1h", o.BatchMemory))
	}
	if o.MaxConns < 2 || o.MaxConns > 100 {
		errs = append(errs, fmt.Errorf("analytics store: max connections %d not from 2 to 100", o.MaxConns))
	}
	for _, d := range []struct {
		name string
		v    time.Duration
	}{{"connect timeout", o.ConnectTimeout}, {"statement timeout", o.StatementTimeout}, {"maintain timeout", o.MaintainTimeout}, {"lock timeout", o.LockTimeout}} {
		if d.v < time.Millisecond {
			errs = append(errs, fmt.Errorf("analytics store: %s %s below 1ms", d.name, d.v))
		}
	}
	if o.MaintainChunk < 1 {
		errs = append(errs, fmt.Errorf("analytics store: maintain chunk %d below 1", o.MaintainChunk))
	}
	return errors.Join(errs...)
}

// Redacted is a PostgreSQL URL with its password replaced by xxxxx, for
// logs and messages; a string that is not a URL (libpq's key=value form)
// is reduced to "(connection string)".
func Redacted(s string) string {
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") {
		return "(connection string)"
	}
	if q := u.Query(); q.Has("password") {
		q.Set("password", "xxxxx")
		u.RawQuery = q.Encode()
	}
	return u.Redacted()
}

// IsURL reports whether s names a PostgreSQL store (postgres:// or
// postgresql://), as --analytics-store tells the stores apart.
func IsURL(s string) bool {
	u, err := url.Parse(s)
	return err == nil && (u.Scheme == "postgres" || u.Scheme == "postgresql")
}
