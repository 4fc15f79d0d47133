package redirect

import (
	"net/http"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/kurz-dev/kurz/internal/testenv"
	"github.com/kurz-dev/kurz/internal/testenv/apiproxy"
)

// gathered reads each named metric (one series, a gauge or a counter) from
// the registry the metrics server serves: the click metrics are package
// clicks', seen here as Prometheus sees them.
func gathered(g Gomega, names ...string) []float64 {
	families, err := metrics.Registry.Gather()
	g.Expect(err).NotTo(HaveOccurred())
	byName := map[string]float64{}
	for _, f := range families {
		m := f.GetMetric()[0]
		byName[f.GetName()] = m.GetGauge().GetValue() + m.GetCounter().GetValue()
	}
	out := make([]float64, len(names))
	for i, name := range names {
		v, ok := byName[name]
		g.Expect(ok).To(BeTrue(), "%s is registered", name)
		out[i] = v
	}
	return out
}

// pendingGauges reads kurz_clicks_pending_links and kurz_clicks_pending.
func pendingGauges(g Gomega) []float64 {
	return gathered(g, "kurz_clicks_pending_links", "kurz_clicks_pending")
}

// flushFailures reads kurz_redirect_click_flush_failures_total.
func flushFailures(g Gomega) float64 {
	return gathered(g, "kurz_redirect_click_flush_failures_total")[0]
}

// TestClicksPendingFollowsAnOutage: while the API server is unreachable the
// pending gauges count every click (links, clicks) and stay through failed
// flushes; once it is back and the clicks are stored they drop to zero.
func TestClicksPendingFollowsAnOutage(t *testing.T) {
	testenv.Need(t)
	g := NewWithT(t)
	ns, host := twoLinks(t, "pending.test")
	p := apiproxy.New(t, cfg)
	a := startServerOn(t, p.Config(), testOptions())
	for _, k := range []string{"k1", "k2"} {
		g.Eventually(func() int { return do(t, "HEAD", a.base, host, "/"+k, nil).status }, 30*time.Second).Should(Equal(http.StatusFound))
	}
	g.Expect(pendingGauges(g)).To(Equal([]float64{0, 0}), "HEAD counts no click")

	p.SetMode(apiproxy.Down)
	hammer(t, a.base, host, "/k1", 5)
	hammer(t, a.base, host, "/k2", 3)
	g.Eventually(pendingGauges, 30*time.Second).Should(Equal([]float64{2, 8}))
	failures := flushFailures(g)
	g.Eventually(func() float64 { return flushFailures(g) }, 30*time.Second).Should(BeNumerically(">", failures))
	g.Eventually(pendingGauges, 30*time.Second).Should(Equal([]float64{2, 8}), "failed flushes keep them pending")
	hammer(t, a.base, host, "/k1", 2)
	g.Eventually(pendingGauges, 30*time.Second).Should(Equal([]float64{2, 10}))

	p.SetMode(apiproxy.Pass)
	g.Eventually(twoLinksClicks(t, ns), 30*time.Second).Should(Equal([]int64{7, 3}))
	g.Eventually(pendingGauges, 30*time.Second).Should(Equal([]float64{0, 0}))
}
