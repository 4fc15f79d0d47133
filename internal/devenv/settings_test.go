package devenv_test

import (
	"bufio"
	"io"
	"net/http"
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kurzv1alpha1 "github.com/kurz-dev/kurz/api/v1alpha1"
	"github.com/kurz-dev/kurz/internal/devenv"
	"github.com/kurz-dev/kurz/internal/testenv"
)

// TestControlPlaneSettings: kube-apiserver keeps no watch cache for Links
// unless asked to and runs with the GOGC asked for (200 by default), and
// etcd gets the quota asked for (8 GiB by default).
func TestControlPlaneSettings(t *testing.T) {
	testenv.Binaries(t)
	for _, tt := range []struct {
		name       string
		tune       func(*devenv.Options)
		watchCache bool
		gogc       string
		quota      string
	}{
		{name: "defaults", gogc: "200", quota: "8.589934592e+09"},
		{name: "watch cache, GOGC and quota asked for", tune: func(o *devenv.Options) {
			o.LinksWatchCache, o.KubeAPIServerGOGC, o.EtcdQuotaBytes = true, 100, 3<<30
		}, watchCache: true, gogc: "100", quota: "3.221225472e+09"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			o := devenv.DefaultOptions()
			o.DataDir = t.TempDir()
			if tt.tune != nil {
				tt.tune(&o)
			}
			env, err := devenv.Start(t.Context(), o)
			g.Expect(err).NotTo(HaveOccurred())
			defer func() { g.Expect(env.Stop()).To(Succeed()) }()

			// A list makes kube-apiserver set up the Links' storage, and
			// with it their watch cache when there is one.
			c, err := client.New(env.Config(), client.Options{Scheme: testScheme})
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(c.List(t.Context(), &kurzv1alpha1.LinkList{})).To(Succeed())
			cs, err := kubernetes.NewForConfig(env.Config())
			g.Expect(err).NotTo(HaveOccurred())
			body, err := cs.Discovery().RESTClient().Get().AbsPath("/metrics").DoRaw(t.Context())
			g.Expect(err).NotTo(HaveOccurred())
			cacheLines := metricLines(strings.NewReader(string(body)), "apiserver_watch_cache_", "links")
			if tt.watchCache {
				g.Expect(cacheLines).NotTo(BeEmpty())
			} else {
				g.Expect(cacheLines).To(BeEmpty())
			}
			g.Expect(metricLines(strings.NewReader(string(body)), "go_gc_gogc_percent ", "")).To(ConsistOf("go_gc_gogc_percent " + tt.gogc))

			resp, err := http.Get(env.EtcdURL() + "/metrics")
			g.Expect(err).NotTo(HaveOccurred())
			defer resp.Body.Close()
			g.Expect(metricLines(resp.Body, "etcd_server_quota_backend_bytes ", "")).To(ConsistOf("etcd_server_quota_backend_bytes " + tt.quota))
		})
	}
}

// metricLines returns the lines of a Prometheus text exposition that start
// with prefix and contain label.
func metricLines(r io.Reader, prefix, label string) []string {
	var out []string
	sc := bufio.NewScanner(r)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		if l := sc.Text(); strings.HasPrefix(l, prefix) && strings.Contains(l, label) {
			out = append(out, l)
		}
	}
	return out
}
