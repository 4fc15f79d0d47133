package redirect

import (
	"context"
	"net/http"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/kurz-dev/kurz/internal/testenv/apiproxy"
)

// pendingGauges reads kurz_clicks_pending_links and kurz_clicks_pending
// from the registry the metrics server serves.
func pendingGauges(g Gomega) [2]float64 {
	families, err := metrics.Registry.Gather()
	g.Expect(err).NotTo(HaveOccurred())
	var out [2]float64
	found := 0
	for _, f := range families {
		switch f.GetName() {
		case "kurz_clicks_pending_links":
			out[0] = f.GetMetric()[0].GetGauge().GetValue()
			found++
		case "kurz_clicks_pending":
			out[1] = f.GetMetric()[0].GetGauge().GetValue()
			found++
		}
	}
	g.Expect(found).To(Equal(2), "both gauges are registered")
	return out
}

// TestClicksPendingFollowsAnOutage: while the API server is unreachable the
// pending gauges count every click (links, clicks) and stay through failed
// flushes; once it is back and the clicks are stored they drop to zero.
func TestClicksPendingFollowsAnOutage(t *testing.T) {
	g := NewWithT(t)
	ns, host := twoLinks(t, "pending.test")
	p := apiproxy.New(t, cfg)
	a := startServerOn(t, p.Config(), testOptions())
	for _, k := range []string{"k1", "k2"} {
		g.Eventually(func() int { return do(t, "HEAD", a.base, host, "/"+k, nil).status }, 30*time.Second).Should(Equal(http.StatusFound))
	}
	g.Expect(pendingGauges(g)).To(Equal([2]float64{0, 0}), "HEAD counts no click")

	p.SetMode(apiproxy.Down)
	hammer(t, a.base, host, "/k1", 5)
	hammer(t, a.base, host, "/k2", 3)
	g.Eventually(pendingGauges, 30*time.Second).Should(Equal([2]float64{2, 8}))
	failures := counterValue(flushFailures)
	g.Eventually(func() float64 { return counterValue(flushFailures) }, 30*time.Second).Should(BeNumerically(">", failures))
	g.Eventually(pendingGauges, 30*time.Second).Should(Equal([2]float64{2, 8}), "failed flushes keep them pending")
	hammer(t, a.base, host, "/k1", 2)
	g.Eventually(pendingGauges, 30*time.Second).Should(Equal([2]float64{2, 10}))

	p.SetMode(apiproxy.Pass)
	g.Eventually(twoLinksClicks(t, ns), 30*time.Second).Should(Equal([]int64{7, 3}))
	g.Eventually(pendingGauges, 30*time.Second).Should(Equal([2]float64{0, 0}))
}

// TestClicksPendingWhileAWriteIsUnanswered: clicks stay pending while their
// patch is in flight to a frozen API server and after it went unanswered
// (outcome unknown), and stop being pending once a flush has settled that
// the late patch applied.
func TestClicksPendingWhileAWriteIsUnanswered(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	l := createLink(t, ns, "l", ns+".unsure.test", "l", "https://dest.example/", nil)
	p := apiproxy.New(t, cfg)
	pc := p.Client(t)
	q := &clickQueue{}
	c := &counter{uid: l.UID, namespace: ns, name: "l", q: q}
	f := newFlusher(q, pc, pc, 100)
	f.writeTimeout = 2 * time.Second
	pending := func() [2]int64 { links, clicks := f.pending(); return [2]int64{links, clicks} }

	for range 3 {
		c.click(time.Now().UnixNano())
	}
	g.Expect(pending()).To(Equal([2]int64{1, 3}))
	p.SetMode(apiproxy.Hold)
	done := make(chan int)
	go func() {
		_, failed := f.flush(ctx, false)
		done <- failed
	}()
	g.Eventually(p.Parked, 10*time.Second).Should(Equal(1))
	g.Expect(pending()).To(Equal([2]int64{1, 3}), "in flight")
	g.Expect(<-done).To(Equal(1))
	g.Expect(pending()).To(Equal([2]int64{1, 3}), "outcome unknown")
	c.click(time.Now().UnixNano())
	g.Expect(pending()).To(Equal([2]int64{1, 4}))

	g.Expect(p.Release(t)).To(Equal([]int{http.StatusOK}))
	p.SetMode(apiproxy.Pass)
	_, failed := f.flush(ctx, false)
	g.Expect(failed).To(BeZero())
	g.Expect(clicksOf(t, ns, "l")).To(Equal(int64(4)))
	g.Expect(pending()).To(Equal([2]int64{0, 0}))
}
