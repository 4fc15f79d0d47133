package redirect

import (
	"context"
	"net/http"
	"path/filepath"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"github.com/valyala/fasthttp"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	kurzv1alpha1 "github.com/kurz-dev/kurz/api/v1alpha1"
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

// utmSink keeps the UTM values of every event the consumer hands it.
type utmSink struct{ got [][3]string }

func (s *utmSink) Clicked(e *analytics.Event) {
	s.got = append(s.got, [3]string{e.UTMSource, e.UTMMedium, e.UTMCampaign})
}

// The click the redirect captures carries the destination it chose for the
// visitor's device, before the visitor's query was merged in: analytics
// reads the UTM values of that destination, the iOS target's for an
// iPhone, the link's URL with the link's utm_* for anything else, and the
// visitor's own utm_* over them.
func TestCaptureCarriesTheChosenDestination(t *testing.T) {
	g := NewWithT(t)
	ix := NewIndex()
	ix.UpsertDomain(testDomain("ns", "d", "go.test", 1))
	app := testLink("ns", "app", "go.test", "app", 2)
	ios := kurzv1alpha1.URL("https://apps.example/id1?utm_source=app-store")
	src, campaign := "newsletter", "spring"
	app.Spec.IOS, app.Spec.UTM = &ios, &kurzv1alpha1.LinkUTM{Source: &src, Campaign: &campaign}
	ix.UpsertLink(app)
	registerMetrics()
	ring := capture.NewRing(8)
	h := &handler{ix: ix, status: http.StatusFound, analytics: ring}
	sink := &utmSink{}
	co := capture.DefaultOptions()
	co.WriterID = "test"
	consumer, err := capture.NewWithOutputs(co, ring, oneSalt{[]analytics.DaySalt{{Day: time.Now(), Salt: analytics.NewSalt()}}}, nil, sink)
	g.Expect(err).NotTo(HaveOccurred())

	for _, r := range []struct{ path, ua, location string }{
		{"/app", "Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X)", "https://apps.example/id1?utm_source=app-store&utm_campaign=spring"},
		{"/app", browserUA, "https://dest.example/ns/app?utm_source=newsletter&utm_campaign=spring"},
		{"/app?utm_medium=qr", browserUA, "https://dest.example/ns/app?utm_source=newsletter&utm_campaign=spring&utm_medium=qr"},
		{"/app?utm_source=qr", "Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X)", "https://apps.example/id1?utm_campaign=spring&utm_source=qr"},
	} {
		var ctx fasthttp.RequestCtx
		hotPathRequest(&ctx, http.MethodGet, "go.test", r.path, r.ua)
		h.serve(&ctx)
		g.Expect(string(ctx.Response.Header.Peek("Location"))).To(Equal(r.location), r.path+" "+r.ua)
	}
	consumer.Drain()
	g.Expect(sink.got).To(Equal([][3]string{
		{"app-store", "", "spring"},
		{"newsletter", "", "spring"},
		{"newsletter", "qr", "spring"},
		{"qr", "", "spring"},
	}))
}
