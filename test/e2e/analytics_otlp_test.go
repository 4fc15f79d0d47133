package e2e

import (
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	. "github.com/onsi/gomega"

	"github.com/kurz-dev/kurz/internal/testenv"
	"github.com/kurz-dev/kurz/internal/testenv/otlpsink"
)

// TestAnalyticsOTLPOnly runs `kurz manager` with an OTLP endpoint and no
// store, as issue 28 allows: real redirects reach the collector as log
// records with the clicks' attributes, and the analytics API answers 503
// saying that nothing here can be queried.
func TestAnalyticsOTLPOnly(t *testing.T) {
	g := NewWithT(t)
	col := &otlpsink.Collector{}
	srv := httptest.NewServer(col)
	t.Cleanup(srv.Close)

	dir := t.TempDir()
	dev := startKurzDev(t, filepath.Join(dir, "dev"), testenv.FreeAddr(t), testenv.FreeAddr(t),
		"--controllers=false", "--redirect=false", "--analytics=false")
	t.Cleanup(func() {
		if err := dev.stop(t, syscall.SIGTERM); err != nil {
			t.Logf("kurz dev: %v; log:\n%s", err, dev.log)
		}
	})
	const host = "otlp.e2e.example"
	dev.must(t, http.StatusCreated, http.MethodPost, "/api/v1/domains", map[string]any{"domain": host})
	l := dev.must(t, http.StatusCreated, http.MethodPost, "/api/v1/links", map[string]any{
		"domain": host, "key": "launch", "url": "https://example.com/launch", "utm_source": "newsletter",
	})

	r := newReplica(t, "otlp", filepath.Join(dev.dataDir, "kubeconfig"), dir)
	r.args = []string{"--analytics-otlp-endpoint", srv.URL, "--analytics-salt-namespace=default"}
	r.start(t)
	t.Cleanup(r.kill)
	g.Eventually(func(g Gomega) {
		if exited, err := r.exited(); exited {
			StopTrying("kurz manager exited: " + errString(err) + "\n" + r.log.Tail(40)).Now()
		}
		req, err := http.NewRequest(http.MethodHead, "http://"+r.redirect+"/launch", nil)
		g.Expect(err).NotTo(HaveOccurred())
		req.Host = host
		resp, err := noRedirects.Do(req)
		g.Expect(err).NotTo(HaveOccurred())
		resp.Body.Close()
		g.Expect(resp.StatusCode).To(Equal(http.StatusFound))
	}).WithTimeout(2*time.Minute).WithPolling(200*time.Millisecond).Should(Succeed(), "kurz manager serves")

	api := &kurzDev{dataDir: dev.dataDir, apiAddr: r.api, redirectAddr: r.redirect}
	code, out := api.call(t, http.MethodGet, "/api/v1/links/"+l["id"].(string)+"/analytics?interval=24h", nil)
	g.Expect(code).To(Equal(http.StatusServiceUnavailable), "%v", out)
	g.Expect(out["message"]).To(ContainSubstring("--analytics-otlp-endpoint"))

	for range 3 {
		api.visit(t, host, "launch", "", desktopUA, "https://news.example.org/today", "")
	}
	api.visit(t, host, "launch", "", phoneUA, "", "")
	// The export runs at the minute's flush.
	g.Eventually(func() int64 {
		var clicks int64
		for _, rec := range col.Records() {
			clicks += rec["kurz.clicks"].(int64)
		}
		return clicks
	}).WithTimeout(3*time.Minute).WithPolling(time.Second).Should(Equal(int64(4)), "log:\n%s", r.log.Tail(40))
	g.Expect(col.Records()).To(ContainElement(And(
		HaveKeyWithValue("kurz.link.key", "launch"), HaveKeyWithValue("kurz.link.namespace", "default"),
		HaveKeyWithValue("kurz.utm_source", "newsletter"), HaveKeyWithValue("kurz.browser", "Chrome"),
		HaveKeyWithValue("kurz.referrer", "news.example.org"), HaveKeyWithValue("kurz.clicks", int64(3)))))
	g.Expect(col.Records()).To(ContainElement(And(HaveKeyWithValue("kurz.device", "mobile"), HaveKeyWithValue("kurz.clicks", int64(1)))))
}

func errString(err error) string {
	if err == nil {
		return "exit 0"
	}
	return err.Error()
}
