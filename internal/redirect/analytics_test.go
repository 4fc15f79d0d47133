package redirect

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/kurz-dev/kurz/internal/analytics"
	"github.com/kurz-dev/kurz/internal/analytics/capture"
	"github.com/kurz-dev/kurz/internal/analytics/sqlite"
	"github.com/kurz-dev/kurz/internal/testenv"
)

type oneSalt struct{ s []analytics.DaySalt }

func (o oneSalt) Salts() (uint64, []analytics.DaySalt) { return 1, o.s }

// analyticsMetric sums a counter of the capture (every label).
func analyticsMetric(t *testing.T, name string) float64 {
	t.Helper()
	mfs, err := metrics.Registry.Gather()
	NewWithT(t).Expect(err).NotTo(HaveOccurred())
	sum := 0.0
	for _, mf := range mfs {
		if mf.GetName() == name {
			for _, m := range mf.GetMetric() {
				sum += m.GetCounter().GetValue()
			}
		}
	}
	return sum
}

// TestAnalyticsStoreFailing: the analytics store fails (closed under the
// writer, as a vanished disk would) while clicks continue: every redirect
// succeeds, the Link's clicks stay exact, and every click's analytics event
// is dropped and counted, none written.
func TestAnalyticsStoreFailing(t *testing.T) {
	testenv.Need(t)
	g := NewWithT(t)
	ns, _ := oneLink(t, "analytics-fail.test", nil)

	so := sqlite.DefaultOptions()
	so.Path = filepath.Join(t.TempDir(), "analytics.db")
	store, err := sqlite.Open(context.Background(), so)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(store.Close()).To(Succeed()) // every Write fails from now on

	co := capture.DefaultOptions()
	co.WriterID, co.FlushInterval, co.WriteTimeout, co.RingSize = "test", 100*time.Millisecond, time.Second, 64
	ring := capture.NewRing(co.RingSize)
	consumer, err := capture.New(co, ring, oneSalt{[]analytics.DaySalt{{Day: time.Now(), Salt: analytics.NewSalt()}}}, store)
	g.Expect(err).NotTo(HaveOccurred())
	droppedBefore := analyticsMetric(t, "kurz_analytics_dropped_clicks_total")
	writtenBefore := analyticsMetric(t, "kurz_analytics_clicks_written_total")

	o := testOptions()
	o.Analytics = AnalyticsCapture{Ring: ring, Consumer: consumer, CountryHeader: "CF-IPCountry"}
	ts := startServer(t, o)
	g.Eventually(func() int { return do(t, "HEAD", ts.base, "analytics-fail.test", "/k", nil).status }, 30*time.Second).Should(Equal(302))
	const n = 300
	hammer(t, ts.base, "analytics-fail.test", "/k", n) // each redirect answered 302
	g.Eventually(func() int64 { return clicksOf(t, ns, "l") }, 30*time.Second).Should(Equal(int64(n)), "the Link's clicks stay exact")
	ts.stop()
	g.Expect(clicksOf(t, ns, "l")).To(Equal(int64(n)))
	g.Expect(analyticsMetric(t, "kurz_analytics_dropped_clicks_total")-droppedBefore).To(Equal(float64(n)), "every event dropped and counted")
	g.Expect(analyticsMetric(t, "kurz_analytics_clicks_written_total") - writtenBefore).To(BeZero())
}
