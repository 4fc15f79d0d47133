package manager

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	mdns "github.com/miekg/dns"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kurzv1alpha1 "github.com/kurz-dev/kurz/api/v1alpha1"
	"github.com/kurz-dev/kurz/controllers/controllerstest"
	"github.com/kurz-dev/kurz/internal/dns/dnstest"
	"github.com/kurz-dev/kurz/internal/testenv"
)

var (
	cfg       *rest.Config
	k8sClient client.Client
)

// Timeouts are generous: other packages' tests share the two cores.
const (
	timeout = 30 * time.Second
	poll    = 50 * time.Millisecond
)

func TestMain(m *testing.M) {
	testenv.Main(m, testenv.Options{}, func(e *testenv.Env) error {
		cfg, k8sClient = e.Config, e.Client
		return nil
	})
}

// Redirect targets the test managers' controllers accept.
const (
	targetHost = "lb.kurz.test"
	targetIP   = "198.51.100.7"
)

var counter atomic.Int64

// unique returns prefix with a suffix unique to this run of the tests.
func unique(prefix string) string {
	return fmt.Sprintf("%s-%d-%d", prefix, counter.Add(1), time.Now().UnixNano()%1e6)
}

func newNamespace(t *testing.T) string {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: unique("mgr")}}
	NewWithT(t).Expect(k8sClient.Create(context.Background(), ns)).To(Succeed())
	return ns.Name
}

// testOptions are a replica's options with every listener on a free
// loopback port, domains verified against srv, and short election times.
func testOptions(t *testing.T, srv *dnstest.Server, ns string) Options {
	o := DefaultOptions()
	o.MetricsBindAddress = "0"
	o.HealthProbeBindAddress = testenv.FreeAddr(t)
	o.API.BindAddress = testenv.FreeAddr(t)
	o.Redirect.BindAddress = testenv.FreeAddr(t)
	o.Redirect.ShutdownTimeout = 2 * time.Second
	o.LeaderElectionNamespace = ns
	o.LeaderElectionID = unique("kurz-controllers")
	o.LeaseDuration, o.RenewDeadline, o.RetryPeriod = 3*time.Second, 2*time.Second, 500*time.Millisecond
	o.ShutdownDelay = 0
	o.Controllers = controllerstest.Options(srv, targetHost, targetIP)
	return o
}

// newDNS starts a DNS server that knows the redirect target.
func newDNS(t *testing.T) *dnstest.Server {
	srv := dnstest.Start(t)
	srv.Set(targetHost, mdns.TypeA, "192.0.2.7")
	return srv
}

// running is a manager started by start.
type running struct {
	m    *Manager
	done chan error // receives Start's (or Run's) result
	stop context.CancelFunc
}

// returned reports whether the manager's Start (or Run) has returned.
func (r *running) returned() bool {
	select {
	case err := <-r.done:
		r.done <- err
		return true
	default:
		return false
	}
}

// start runs fn (m.Start or m.Run) on a context the test cancels at its end.
func start(t *testing.T, m *Manager, fn func(*Manager, context.Context) error) *running {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	r := &running{m: m, done: make(chan error, 1), stop: cancel}
	go func() { r.done <- fn(m, ctx) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-r.done:
			if err != nil {
				t.Errorf("manager: %v", err)
			}
		case <-time.After(timeout):
			t.Errorf("manager did not stop within %s", timeout)
		}
	})
	return r
}

func createDomain(t *testing.T, ns, name, host string) {
	t.Helper()
	d := &kurzv1alpha1.Domain{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: kurzv1alpha1.DomainSpec{Domain: kurzv1alpha1.Hostname(host)}}
	NewWithT(t).Expect(k8sClient.Create(context.Background(), d)).To(Succeed())
}

func createLink(t *testing.T, ns, name, host, key string) *kurzv1alpha1.Link {
	t.Helper()
	l := &kurzv1alpha1.Link{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: kurzv1alpha1.LinkSpec{Domain: kurzv1alpha1.Hostname(host), Key: key,
			URL: kurzv1alpha1.URL("https://example.com/" + key)}}
	NewWithT(t).Expect(k8sClient.Create(context.Background(), l)).To(Succeed())
	return l
}

// linkReady returns a Link's Ready condition as "Status/Reason" ("" when
// it has none: no controller has looked at it).
func linkReady(l *kurzv1alpha1.Link) func(Gomega) string {
	return func(g Gomega) string {
		got := &kurzv1alpha1.Link{}
		g.Expect(k8sClient.Get(context.Background(), client.ObjectKeyFromObject(l), got)).To(Succeed())
		c := meta.FindStatusCondition(got.Status.Conditions, kurzv1alpha1.ConditionReady)
		if c == nil {
			return ""
		}
		return string(c.Status) + "/" + c.Reason
	}
}

const linkActive = "True/" + kurzv1alpha1.ReasonActive

var noFollow = &http.Client{
	Timeout:       5 * time.Second,
	CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
}

// follow asks the redirect server at addr for host/key and returns the
// status and Location (status 0 when it could not connect).
func follow(addr, host, key string) (int, string) {
	req, err := http.NewRequest(http.MethodGet, "http://"+addr+"/"+key, nil)
	if err != nil {
		return 0, err.Error()
	}
	req.Host = host
	resp, err := noFollow.Do(req)
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	return resp.StatusCode, resp.Header.Get("Location")
}

// readyz returns the status of GET /readyz at addr (0 when unreachable).
func readyz(addr string) int {
	resp, err := noFollow.Get("http://" + addr + "/readyz")
	if err != nil {
		return 0
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	return resp.StatusCode
}
