package sqlite

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	. "github.com/onsi/gomega"

	"github.com/kurz-dev/kurz/internal/analytics"
	"github.com/kurz-dev/kurz/internal/analytics/storetest"
	"github.com/kurz-dev/kurz/internal/analytics/synth"
)

var day0 = storetest.Day0

// options maps the suite's options onto the store's, at path.
func options(path string, so storetest.Options) Options {
	o := DefaultOptions()
	o.Path = path
	o.Retention, o.RollupRetention, o.DeleteGrace = so.Retention, so.RollupRetention, so.DeleteGrace
	o.DetailThreshold, o.MaintainChunk = so.DetailThreshold, so.MaintainChunk
	// The stores' tests load thousands of rows; the pauses (TestPacer)
	// would only stretch them.
	o.PaceWrites = false
	return o
}

var backend = storetest.Backend{
	Place: func(t testing.TB) string { return filepath.Join(t.TempDir(), "analytics.db") },
	Open: func(ctx context.Context, path string, so storetest.Options, now func() time.Time) (analytics.Store, error) {
		s, err := Open(ctx, options(path, so))
		if err != nil {
			return nil, err
		}
		s.now = now
		return s, nil
	},
}

// TestStore runs the behaviour every store shows (storetest), including
// the property test against a brute force.
func TestStore(t *testing.T) { storetest.Run(t, backend) }

func testOptions(t testing.TB) Options {
	return options(backend.Place(t), storetest.DefaultOptions())
}

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

// TestRetentionDeletesRows checks the tables behind storetest's
// retention test: raw days dropped whole, no row of a removed link left.
func TestRetentionDeletesRows(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	gen := synth.New(synth.Config{Links: 30, Namespaces: 2, Clicks: 20000, Days: 10, Start: day0, Seed: 11})
	now := day0.AddDate(0, 0, 10).Add(time.Hour)
	s := openTest(t, options(backend.Place(t), storetest.RetentionOptions()), now)
	storetest.Load(t, s, gen, 10)
	g.Expect(s.Maintain(ctx, now)).To(Succeed())
	var oldest int64
	g.Expect(s.r.QueryRow("SELECT min(day) FROM events").Scan(&oldest)).To(Succeed())
	g.Expect(oldest).To(Equal(day0.Unix()/86400 + 8))

	g.Expect(s.Forget(ctx, now, gen.Links()[0].UID)).To(Succeed())
	g.Expect(s.Maintain(ctx, now.Add(2*time.Hour))).To(Succeed())
	for _, table := range []string{"events", "link_days", "link_values", "link_months"} {
		var n int
		g.Expect(s.r.QueryRow("SELECT count(*) FROM " + table + " WHERE link NOT IN (SELECT id FROM links)").Scan(&n)).To(Succeed())
		g.Expect(n).To(BeZero(), table)
	}
}
