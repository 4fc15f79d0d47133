package storetest

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/kurz-dev/kurz/internal/analytics"
	"github.com/kurz-dev/kurz/internal/analytics/synth"
)

// Day0 is the first generated day: March 25th, so the data crosses a month
// and New York's and London's clocks going forward.
var Day0 = time.Date(2025, 3, 25, 0, 0, 0, 0, time.UTC)

// Options are the store options the suite sets; each store maps them onto
// its own.
type Options struct {
	Retention, RollupRetention, DeleteGrace time.Duration
	DetailThreshold, MaintainChunk          int
}

// DefaultOptions are the suite's: the stores' retention defaults, with a
// detail threshold and chunk small enough that the test data crosses
// them.
func DefaultOptions() Options {
	return Options{
		Retention:       90 * 24 * time.Hour,
		RollupRetention: 2 * 365 * 24 * time.Hour,
		DeleteGrace:     7 * 24 * time.Hour,
		DetailThreshold: 40,
		MaintainChunk:   7,
	}
}

// Backend is a store under test.
type Backend struct {
	// Place makes a new, empty place for a store (a file, a database).
	Place func(t testing.TB) string
	// Open opens the store at place with o; the store reads its clock
	// (query routing, retention) from now.
	Open func(ctx context.Context, place string, o Options, now func() time.Time) (analytics.Store, error)
}

// Clock is a time a test moves.
type Clock struct {
	mu sync.Mutex
	t  time.Time
}

// NewClock returns a clock at t.
func NewClock(t time.Time) *Clock { return &Clock{t: t} }

// Now is the clock's time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

// Set moves the clock to t.
func (c *Clock) Set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = t
}

// OpenNew opens a store at a new place, closed when t ends.
func (b Backend) OpenNew(t testing.TB, o Options, c *Clock) analytics.Store {
	t.Helper()
	s, _ := b.OpenAt(t, b.Place(t), o, c)
	return s
}

// OpenAt opens the store at place, closed when t ends, and returns it with
// place.
func (b Backend) OpenAt(t testing.TB, place string, o Options, c *Clock) (analytics.Store, string) {
	t.Helper()
	s, err := b.Open(context.Background(), place, o, c.Now)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s, place
}

// Load writes the generator's first days through an Aggregator in batches
// of at most 1 000 rows, as a writer would, and returns the events
// written (aggregated).
func Load(t testing.TB, s analytics.Writer, g *synth.Generator, days int) []analytics.Event {
	t.Helper()
	var all []analytics.Event
	a := analytics.NewAggregator(1024)
	seq := 0
	flush := func() {
		seq++
		b := a.Take(fmt.Sprintf("test-%d", seq))
		if err := s.Write(context.Background(), b); err != nil {
			t.Fatal(err)
		}
		all = append(all, b.Events...)
	}
	for d := range days {
		g.Day(d, func(e *analytics.Event) {
			a.Add(*e)
			if a.Len() >= 1000 {
				flush()
			}
		})
	}
	flush()
	return all
}

// Zones are the zones random queries use: UTC, two with daylight saving
// that changes inside the data, a half-hour offset, and one ahead of UTC.
var Zones = func() []*time.Location {
	out := make([]*time.Location, 0, 5)
	for _, n := range []string{"UTC", "America/New_York", "Asia/Kolkata", "Europe/London", "Asia/Tokyo"} {
		l, err := time.LoadLocation(n)
		if err != nil {
			panic(err)
		}
		out = append(out, l)
	}
	return out
}()
