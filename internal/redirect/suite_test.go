package redirect

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/kurz-dev/kurz/internal/fieldindex"
	kurzscheme "github.com/kurz-dev/kurz/internal/scheme"
	"github.com/kurz-dev/kurz/internal/testenv"
)

var (
	env       *testenv.Env
	cfg       *rest.Config
	k8s       client.Client
	scheme    = kurzscheme.Scheme
	nsCounter int
)

func TestMain(m *testing.M) {
	testenv.Main(m, testenv.Options{
		// The outage test stops kube-apiserver and starts it again.
		Restartable: true,
		// kube-apiserver drains its requests (the managers' watches) on
		// SIGTERM, which can take longer than the default.
		StopTimeout: 2 * time.Minute,
		// On SIGTERM kube-apiserver waits for in-flight requests up to the
		// request timeout (60 s by default); keep the outage test short.
		APIServerFlags: map[string]string{"request-timeout": "5s"},
	}, func(e *testenv.Env) error {
		env, cfg, k8s = e, e.Config, e.Client
		return nil
	})
}

// newNamespace creates a namespace (a workspace) for one test.
func newNamespace(t *testing.T) string {
	t.Helper()
	nsCounter++
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("redirect-%d", nsCounter)}}
	NewWithT(t).Expect(k8s.Create(context.Background(), ns)).To(Succeed())
	return ns.Name
}

// testServer is one manager with only the redirect role, built like
// internal/manager builds it (scheme, stripped managedFields, field indexes).
type testServer struct {
	srv  *Server
	base string // http://127.0.0.1:port
	stop func()
}

func startServer(t *testing.T, o Options) *testServer {
	t.Helper()
	return startServerOn(t, cfg, o)
}

// startServerOn starts a server talking to the API server at c (a proxy).
func startServerOn(t *testing.T, c *rest.Config, o Options) *testServer {
	t.Helper()
	g := NewWithT(t)
	mgr, err := ctrl.NewManager(c, ctrl.Options{
		Scheme:                 scheme,
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		Cache:                  cache.Options{DefaultTransform: cache.TransformStripManagedFields()},
	})
	g.Expect(err).NotTo(HaveOccurred())
	ctx, cancel := context.WithCancel(context.Background())
	g.Expect(fieldindex.Setup(ctx, mgr.GetFieldIndexer())).To(Succeed())
	o.BindAddress = "127.0.0.1:0"
	srv, err := setup(mgr, o)
	g.Expect(err).NotTo(HaveOccurred())
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	stopped := false
	stop := func() {
		if stopped {
			return
		}
		stopped = true
		cancel()
		g.Expect(<-done).To(Succeed())
	}
	t.Cleanup(stop)
	g.Eventually(srv.Addr, 30*time.Second).ShouldNot(BeNil())
	return &testServer{srv: srv, base: "http://" + srv.Addr().String(), stop: stop}
}

func testOptions() Options {
	o := DefaultOptions()
	o.Clicks.FlushInterval = 200 * time.Millisecond
	o.Clicks.FlushQPS = 500
	return o
}

// noFollow does not follow redirects: tests look at them.
var noFollow = &http.Client{
	Timeout:       10 * time.Second,
	CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
}

type answer struct {
	status   int
	location string
	header   http.Header
	body     string
}

// do sends method to base+path with the Host header host.
func do(t *testing.T, method, base, host, path string, hdr map[string]string) answer {
	t.Helper()
	req, err := http.NewRequest(method, base+path, nil)
	NewWithT(t).Expect(err).NotTo(HaveOccurred())
	req.Host = host
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	return send(t, req)
}

func send(t *testing.T, req *http.Request) answer {
	t.Helper()
	resp, err := noFollow.Do(req)
	NewWithT(t).Expect(err).NotTo(HaveOccurred())
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	NewWithT(t).Expect(err).NotTo(HaveOccurred())
	return answer{status: resp.StatusCode, location: resp.Header.Get("Location"), header: resp.Header, body: string(b)}
}

func keyOf(ns, name string) client.ObjectKey { return client.ObjectKey{Namespace: ns, Name: name} }
