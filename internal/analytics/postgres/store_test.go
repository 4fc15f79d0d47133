package postgres

import (
	"context"
	"testing"
	"time"

	"github.com/kurz-dev/kurz/internal/analytics"
	"github.com/kurz-dev/kurz/internal/analytics/storetest"
	"github.com/kurz-dev/kurz/internal/testenv"
)

func TestMain(m *testing.M) { testenv.Main(m, testenv.Options{}, nil) }

var day0 = storetest.Day0

// options maps the suite's options onto the store's, at url.
func options(url string, so storetest.Options) Options {
	o := DefaultOptions()
	o.URL = url
	o.Retention, o.RollupRetention, o.DeleteGrace = so.Retention, so.RollupRetention, so.DeleteGrace
	o.DetailThreshold, o.MaintainChunk = so.DetailThreshold, so.MaintainChunk
	return o
}

var backend = storetest.Backend{
	Place: testenv.Postgres,
	Open: func(ctx context.Context, url string, so storetest.Options, now func() time.Time) (analytics.Store, error) {
		s, err := Open(ctx, options(url, so))
		if err != nil {
			return nil, err
		}
		s.now = now
		return s, nil
	},
}

// TestStore runs the behaviour every store shows (storetest), including
// the property test against a brute force: the same answers as SQLite.
func TestStore(t *testing.T) { storetest.Run(t, backend) }

func openTest(t testing.TB, o Options, now time.Time) *Store {
	t.Helper()
	s, err := Open(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	s.now = func() time.Time { return now }
	t.Cleanup(func() { s.Close() })
	return s
}
