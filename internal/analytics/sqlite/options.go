package sqlite

import (
	"errors"
	"flag"
	"fmt"
	"time"

	"github.com/kurz-dev/kurz/internal/analytics/sqlplan"
	"github.com/kurz-dev/kurz/internal/flagbind"
)

// Options configure a Store. Start from DefaultOptions.
type Options struct {
	// Path is the database file (its -wal and -shm files sit beside it).
	Path string
	// Retention is how long raw events are kept.
	Retention time.Duration `flag:"analytics-retention" usage:"How long analytics keeps raw click events (minute resolution, any filter, any time zone); daily rollups are kept for --analytics-rollup-retention."`
	// RollupRetention is how long rollups are kept.
	RollupRetention time.Duration `flag:"analytics-rollup-retention" usage:"How long analytics keeps daily and monthly rollups."`
	// DeleteGrace is how long the analytics of a deleted Link stay before
	// Maintain removes them (a Link recreated from a backup or by GitOps
	// within the grace has a new uid, so this only delays the removal).
	DeleteGrace time.Duration `flag:"analytics-delete-grace" usage:"How long the analytics of a deleted Link are kept before they are removed."`
	// DetailThreshold is the clicks a link has in a UTC day from which that
	// day gets per-dimension rollups (link_values): below it the raw events
	// are fewer rows than the rollup would be.
	DetailThreshold int
	// BatchMemory is how long applied batch ids are remembered: a writer
	// retries a batch for at most this long.
	BatchMemory time.Duration
	// ReadConns is the size of the read pool (the writer has its own
	// connection).
	ReadConns int
	// BusyTimeout is how long one statement waits for a lock held by
	// another connection or process before it fails; ctx ends it sooner.
	BusyTimeout time.Duration
	// MaintainChunk is how many links one retention or deletion
	// transaction covers, so that Maintain never holds the write lock long.
	MaintainChunk int
	// PaceWrites makes Write pause between chunks of a batch's rows for as
	// long as the chunk took (see pacer): the writer then takes at most
	// about half of a processor while redirects want it too, and a
	// redirect waits behind at most one chunk. Off only to measure the
	// store's own cost.
	PaceWrites bool
}

// DefaultOptions returns every default.
func DefaultOptions() Options {
	return Options{
		Retention:       90 * 24 * time.Hour,
		RollupRetention: 2 * 365 * 24 * time.Hour,
		DeleteGrace:     7 * 24 * time.Hour,
		DetailThreshold: 200,
		BatchMemory:     3 * 24 * time.Hour,
		ReadConns:       4,
		BusyTimeout:     5 * time.Second,
		MaintainChunk:   200,
		PaceWrites:      true,
	}
}

// BindFlags registers the retention flags.
func (o *Options) BindFlags(fs *flag.FlagSet) { flagbind.Fields(fs, o) }

// Validate refuses impossible values, naming the flag or field.
func (o Options) Validate() error {
	var errs []error
	if o.Path == "" {
		errs = append(errs, errors.New("analytics store: path is empty"))
	}
	errs = append(errs, sqlplan.CheckRetention(o.Retention, o.RollupRetention, o.DeleteGrace)...)
	if o.DetailThreshold < 1 {
		errs = append(errs, fmt.Errorf("analytics store: detail threshold %d below 1", o.DetailThreshold))
	}
	if o.BatchMemory < time.Hour {
		errs = append(errs, fmt.Errorf("analytics store: batch memory %s below 1h", o.BatchMemory))
	}
	if o.ReadConns < 1 || o.ReadConns > 64 {
		errs = append(errs, fmt.Errorf("analytics store: read connections %d not from 1 to 64", o.ReadConns))
	}
	if o.BusyTimeout < 0 {
		errs = append(errs, fmt.Errorf("analytics store: busy timeout %s negative", o.BusyTimeout))
	}
	if o.MaintainChunk < 1 {
		errs = append(errs, fmt.Errorf("analytics store: maintain chunk %d below 1", o.MaintainChunk))
	}
	return errors.Join(errs...)
}
