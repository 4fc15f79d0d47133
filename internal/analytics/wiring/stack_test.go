package wiring

import (
	"context"
	"net/netip"
	"sync"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	dto "github.com/prometheus/client_model/go"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/kurz-dev/kurz/internal/analytics"
	"github.com/kurz-dev/kurz/internal/analytics/capture"
	"github.com/kurz-dev/kurz/internal/analytics/geoip"
	"github.com/kurz-dev/kurz/internal/testenv"
)

// TestMain stops the throwaway PostgreSQL cluster after the tests
// (testenv.Postgres); no kube-apiserver is started (none calls Need).
func TestMain(m *testing.M) { testenv.Main(m, testenv.Options{}, nil) }

// The tests build a process's analytics as Setup does (openStore,
// newConsumer, the keeper), without the kube parts: the salts are fixed and
// clicks are put in the ring as the redirect handler puts them.

const testUA = "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0 Safari/537.36"

type testLink struct{ ref analytics.LinkRef }

func (l *testLink) AnalyticsRef() analytics.LinkRef { return l.ref }

type fixedSalts []analytics.DaySalt

func (f fixedSalts) Salts() (uint64, []analytics.DaySalt) { return 1, f }

var salts = fixedSalts{{Day: time.Now(), Salt: analytics.NewSalt()}}

// stack is one process's analytics.
type stack struct {
	k    *keeper
	ring *capture.Ring
	c    *capture.Consumer
	geo  *geoip.DB // --geoip-database, for the test to reload
	// stop ends run's consumer loop and waits for it (nil: not running).
	stop func()
}

// testOptions are analytics on with store (may be ""), flushing often.
func testOptions(store string) Options {
	o := DefaultOptions()
	o.Store = store
	o.Capture.DrainInterval = 5 * time.Millisecond
	o.Capture.FlushInterval = 100 * time.Millisecond
	o.Capture.WriteTimeout = 3 * time.Second
	return o
}

func newStack(t *testing.T, o Options, sinks ...analytics.Sink) *stack {
	t.Helper()
	g := NewWithT(t)
	o.Complete()
	g.Expect(o.Validate()).To(Succeed())
	k := &keeper{}
	if o.Store != "" {
		store, err := openStore(context.Background(), o)
		g.Expect(err).NotTo(HaveOccurred())
		k.store = store
	}
	t.Cleanup(func() { _ = k.close() })
	ring := capture.NewRing(o.Capture.RingSize)
	c, geo, err := newConsumer(o, ring, salts, k, sinks)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(c.Replay(context.Background())).To(Succeed())
	return &stack{k: k, ring: ring, c: c, geo: geo}
}

// run runs the consumer until finish or the end of the test.
func (s *stack) run(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); s.c.Run(ctx) }()
	s.stop = sync.OnceFunc(func() { cancel(); <-done })
	t.Cleanup(func() { _ = s.finish() })
}

// finish is the redirect server's shutdown: the consumer's loop has
// returned before Finish takes the last clicks and stops the writer (a
// Finish beside a running loop is a race, and a flush after it a send on
// the writer's closed queue).
func (s *stack) finish() error {
	if s.stop != nil {
		s.stop()
	}
	return s.c.Finish(context.Background())
}

// click puts one click in the ring; false when the ring was full (the
// redirect does not wait either).
func (s *stack) click(l *testLink, ip, country, referer string) bool {
	c, v, ok := s.ring.Reserve()
	if !ok {
		return false
	}
	c.Time, c.Link, c.IP = time.Now(), l, netip.MustParseAddr(ip)
	c.Dest, c.DestUTM = "https://dest.example/", "?utm_source=newsletter"
	c.SetText([]byte(testUA), []byte(referer), nil)
	c.SetCountry([]byte(country))
	s.ring.Commit(v)
	return true
}

// clicksByLink is what a reader answers: the clicks of ns's links in the
// last and next hour.
func clicksByLink(ctx context.Context, r analytics.Reader, ns string) (map[string]int64, error) {
	now := time.Now().UTC()
	res, err := r.Query(ctx, analytics.Query{Namespace: ns, Start: now.Add(-time.Hour).Truncate(time.Hour), End: now.Add(time.Hour).Truncate(time.Hour),
		Granularity: analytics.Hour, GroupBy: analytics.GroupByLink, Limit: 100, Source: analytics.SourceEvents})
	if err != nil {
		return nil, err
	}
	out := map[string]int64{}
	for _, r := range res.Rows {
		out[r.Key] = r.Clicks
	}
	return out, nil
}

// metricSum is the sum of a counter's series whose labels include want.
func metricSum(g Gomega, name string, want map[string]string) float64 {
	capture.RegisterMetrics()
	mfs, err := metrics.Registry.Gather()
	g.Expect(err).NotTo(HaveOccurred())
	var sum float64
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			if hasLabels(m, want) {
				sum += m.GetCounter().GetValue()
			}
		}
	}
	return sum
}

func hasLabels(m *dto.Metric, want map[string]string) bool {
	n := 0
	for _, l := range m.GetLabel() {
		if v, ok := want[l.GetName()]; ok && v == l.GetValue() {
			n++
		}
	}
	return n == len(want)
}
