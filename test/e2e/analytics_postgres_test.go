package e2e

import (
	"fmt"
	"net/http"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	. "github.com/onsi/gomega"

	"github.com/kurz-dev/kurz/internal/testenv"
)

// TestAnalyticsReplicasPostgres is issue 28's deployment: two `kurz
// manager` processes serve redirects and write their clicks to one
// PostgreSQL database, a third serves only the API and answers analytics
// from it; the counts of both writers add up there. The store's URL comes
// from KURZ_ANALYTICS_STORE, as the chart passes it from a Secret.
func TestAnalyticsReplicasPostgres(t *testing.T) {
	g := NewWithT(t)
	store := testenv.NewPostgres(t).CreateDatabase(t)
	dir := t.TempDir()
	// kurz dev brings the control plane and an API to create the Links
	// with; its own controllers, redirect server and analytics are off.
	dev := startKurzDev(t, filepath.Join(dir, "dev"), testenv.FreeAddr(t), testenv.FreeAddr(t),
		"--controllers=false", "--redirect=false", "--analytics=false")
	t.Cleanup(func() {
		if err := dev.stop(t, syscall.SIGTERM); err != nil {
			t.Logf("kurz dev: %v; log:\n%s", err, dev.log)
		}
	})
	kubeconfig := filepath.Join(dev.dataDir, "kubeconfig")

	const host = "pg.e2e.example"
	dev.must(t, http.StatusCreated, http.MethodPost, "/api/v1/domains", map[string]any{"domain": host})
	ids := map[string]string{}
	for _, key := range []string{"alpha", "beta"} {
		l := dev.must(t, http.StatusCreated, http.MethodPost, "/api/v1/links", map[string]any{
			"domain": host, "key": key, "url": "https://example.com/" + key,
		})
		ids[key] = l["id"].(string)
	}

	env := []string{"KURZ_ANALYTICS_STORE=" + store}
	// In a cluster the salt Secret's namespace is the pod's.
	salt := "--analytics-salt-namespace=default"
	var writers [2]*replica
	for i := range writers {
		writers[i] = newReplica(t, fmt.Sprintf("writer-%d", i), kubeconfig, dir)
		writers[i].args = []string{"--api=false", salt}
		writers[i].env = env
	}
	reader := newReplica(t, "reader", kubeconfig, dir)
	reader.args = []string{"--controllers=false", "--redirect=false", salt}
	reader.env = env
	all := []*replica{writers[0], writers[1], reader}
	for _, r := range all {
		r.start(t)
		t.Cleanup(r.kill)
	}
	for _, r := range writers {
		g.Eventually(func(g Gomega) {
			if exited, err := r.exited(); exited {
				StopTrying(fmt.Sprintf("%s exited (%v); log:\n%s", r.name, err, r.log.Tail(40))).Now()
			}
			for _, key := range []string{"alpha", "beta"} {
				req, err := http.NewRequest(http.MethodHead, "http://"+r.redirect+"/"+key, nil)
				g.Expect(err).NotTo(HaveOccurred())
				req.Host = host
				resp, err := noRedirects.Do(req)
				g.Expect(err).NotTo(HaveOccurred())
				resp.Body.Close()
				g.Expect(resp.StatusCode).To(Equal(http.StatusFound), "%s %s", r.name, key)
			}
		}).WithTimeout(2*time.Minute).WithPolling(200*time.Millisecond).Should(Succeed(), "%s serves", r.name)
	}

	// Each writer gets its own mix, so a sum that only one writer's rows
	// make up cannot pass: alpha 3+4, beta 5+2, desktop 3+2, mobile 5+4.
	clicks := []struct {
		writer int
		key    string
		n      int
		ua     string
	}{
		{0, "alpha", 3, desktopUA}, {0, "beta", 5, phoneUA},
		{1, "alpha", 4, phoneUA}, {1, "beta", 2, desktopUA},
	}
	for _, c := range clicks {
		w := &kurzDev{redirectAddr: writers[c.writer].redirect}
		for range c.n {
			w.visit(t, host, c.key, "", c.ua, "", "")
		}
	}

	api := &kurzDev{dataDir: dev.dataDir, apiAddr: reader.api}
	// Rows reach PostgreSQL at each writer's minute flush.
	g.Eventually(func() map[string]float64 {
		return api.rows(t, "/api/v1/analytics?interval=24h&group_by=link")
	}).WithTimeout(3*time.Minute).WithPolling(2*time.Second).Should(Equal(map[string]float64{
		ids["alpha"]: 7, ids["beta"]: 7,
	}), "reader log:\n%s", reader.log.Tail(40))
	g.Expect(api.rows(t, "/api/v1/analytics?interval=24h&group_by=device")).To(Equal(map[string]float64{"desktop": 5, "mobile": 9}))
	g.Expect(api.rows(t, "/api/v1/links/"+ids["alpha"]+"/analytics?interval=24h&group_by=device")).To(Equal(map[string]float64{"desktop": 3, "mobile": 4}))
	for _, r := range all {
		exited, err := r.exited()
		g.Expect(exited).To(BeFalse(), "%s exited (%v)", r.name, err)
	}
}
