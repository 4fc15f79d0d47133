package wiring

import (
	"context"
	"net/http/httptest"
	"path/filepath"
	"testing"
	"time"

	. "github.com/onsi/gomega"

	"github.com/kurz-dev/kurz/internal/analytics"
	"github.com/kurz-dev/kurz/internal/analytics/otlp"
	"github.com/kurz-dev/kurz/internal/testenv/otlpsink"
)

// OTLP alone (no store): the capture's consumer enriches the clicks, sums
// a minute's identical ones and exports each row as a log record with the
// click's attributes, with the headers from OTEL_EXPORTER_OTLP_HEADERS.
func TestOTLPExportEndToEnd(t *testing.T) {
	g := NewWithT(t)
	col := &otlpsink.Collector{}
	srv := httptest.NewServer(col)
	defer srv.Close()
	t.Setenv(otlp.HeadersEnv, "Authorization=Bearer%20t0ken")
	o := testOptions("")
	o.OTLP.Endpoint = srv.URL
	s := newStack(t, o)
	g.Expect(s.k.store).To(BeNil(), "no store: the API answers 503")
	g.Expect(s.k.export).NotTo(BeNil())
	link := &testLink{analytics.LinkRef{UID: "uid-o", Namespace: "mkt", Name: "launch", Domain: "go.example", Key: "launch"}}
	for range 3 {
		g.Expect(s.click(link, "192.0.2.1", "fr", "https://news.example.org/a?b=c")).To(BeTrue())
	}
	g.Expect(s.click(link, "192.0.2.2", "", "")).To(BeTrue())
	g.Expect(s.finish()).To(Succeed())

	recs := col.Records()
	g.Expect(recs).To(HaveLen(2), "two distinct rows: the three identical clicks are one")
	var clicks int64
	for _, r := range recs {
		g.Expect(r).To(HaveKeyWithValue("kurz.link.uid", "uid-o"))
		g.Expect(r).To(HaveKeyWithValue("kurz.link.namespace", "mkt"))
		g.Expect(r).To(HaveKeyWithValue("kurz.link.key", "launch"))
		g.Expect(r).To(HaveKeyWithValue("kurz.utm_source", "newsletter"))
		g.Expect(r).To(HaveKeyWithValue("kurz.browser", "Chrome"))
		g.Expect(r).To(HaveKey("kurz.visitor"))
		clicks += r["kurz.clicks"].(int64)
	}
	g.Expect(clicks).To(Equal(int64(4)))
	g.Expect(recs).To(ContainElement(And(HaveKeyWithValue("kurz.clicks", int64(3)),
		HaveKeyWithValue("kurz.country", "FR"), HaveKeyWithValue("kurz.referrer", "news.example.org"))))
	g.Expect(col.Authorization()).To(HaveEach("Bearer t0ken"))
}

// A stalled collector alongside a store: the store gets every batch; the
// export's requests time out (within the flush interval) or its own queue
// fills, and its batches are dropped and counted as otlp_*; the consumer
// never waits.
func TestStalledCollectorDoesNotSlowTheStore(t *testing.T) {
	g := NewWithT(t)
	col := &otlpsink.Collector{Block: make(chan struct{})}
	srv := httptest.NewServer(col)
	defer srv.Close()
	defer close(col.Block)
	o := testOptions(filepath.Join(t.TempDir(), "analytics.db"))
	o.OTLP.Endpoint, o.OTLP.Timeout, o.OTLP.Attempts = srv.URL, time.Minute, 1
	s := newStack(t, o)
	s.run(t)
	link := &testLink{analytics.LinkRef{UID: "uid-s", Namespace: "ops", Name: "s", Domain: "go.example", Key: "s"}}
	otlpDropped := func() float64 {
		return metricSum(g, "kurz_analytics_dropped_clicks_total", map[string]string{"reason": "otlp_queue_full"}) +
			metricSum(g, "kurz_analytics_dropped_clicks_total", map[string]string{"reason": "otlp_failed"})
	}
	storeDropped := func() float64 {
		return metricSum(g, "kurz_analytics_dropped_clicks_total", map[string]string{"reason": "queue_full"})
	}
	before, storeBefore := otlpDropped(), storeDropped()
	sent := int64(0)
	g.Eventually(func() float64 {
		g.Expect(s.click(link, "192.0.2.3", "", "")).To(BeTrue())
		sent++
		return otlpDropped() - before
	}).WithTimeout(30*time.Second).WithPolling(20*time.Millisecond).Should(BeNumerically(">", 0), "each request ends within the flush interval, or the queue is full: drops")
	g.Eventually(func() (int64, error) {
		got, err := clicksByLink(context.Background(), s.k.store, "ops")
		return got["uid-s"], err
	}).WithTimeout(10*time.Second).Should(Equal(sent), "the store took every click meanwhile")
	g.Expect(storeDropped() - storeBefore).To(BeZero())
}
