package controllers_test

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	"sigs.k8s.io/controller-runtime/pkg/config"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	kurzv1alpha1 "github.com/kurz-dev/kurz/api/v1alpha1"
	"github.com/kurz-dev/kurz/controllers"
	"github.com/kurz-dev/kurz/controllers/controllerstest"
	"github.com/kurz-dev/kurz/internal/dns/dnstest"
	"github.com/kurz-dev/kurz/internal/fieldindex"
	kurzscheme "github.com/kurz-dev/kurz/internal/scheme"
	"github.com/kurz-dev/kurz/internal/testenv"
)

var (
	cfg       *rest.Config
	k8sClient client.Client
	// ctx is the context of the tests' client calls; each manager runs
	// under its own (start).
	ctx = context.Background()
	// scheme is kurz's one scheme, the one internal/manager uses
	// (internal/manager is not imported, to keep the tests of this package
	// independent of the other roles).
	scheme = kurzscheme.Scheme
)

// Redirect targets every test manager is configured with.
const (
	targetHost = "lb.kurz.test"
	targetIP   = "198.51.100.7"
	targetIPv6 = "2001:db8::7"
)

func TestMain(m *testing.M) {
	testenv.Main(m, testenv.Options{
		// cert-manager's CRDs (make cert-manager-crds), so TLSReady reads
		// real Certificates, and the Gateway API's standard channel (make
		// gateway-api-crds), so Gateways, ListenerSets and HTTPRoutes are
		// validated as in a cluster.
		CRDPaths: []string{
			filepath.Join(testenv.RepoRoot(), "config", "thirdparty", "cert-manager"),
			filepath.Join(testenv.RepoRoot(), "config", "thirdparty", "gateway-api"),
		},
	}, func(e *testenv.Env) error {
		cfg, k8sClient = e.Config, e.Client
		return nil
	})
}

// testOptions are controller options against srv with short DNS waits.
func testOptions(srv *dnstest.Server) controllers.Options {
	return controllerstest.Options(srv, targetHost, targetIP)
}

// newDNS starts a DNS server that knows the redirect target's addresses.
func newDNS(t testing.TB) *dnstest.Server {
	srv := dnstest.Start(t)
	srv.Set(targetHost, dnsTypeA, "192.0.2.7")
	srv.Set(targetHost, dnsTypeAAAA, targetIPv6)
	return srv
}

// newManager builds a manager with what internal/manager gives the
// controllers (the scheme, the field indexes, the routing kinds cached in
// the ingress namespace only, the controllers), with metrics and probes
// off. Its cache only strips managedFields: internal/manager's applies
// internal/cacheslim.Transform, which also drops the last-applied
// annotation (no controller reads it) and shares repeated strings, and
// reads Links through internal/linkcodec. Controller names repeat across
// the tests' managers, hence SkipNameValidation.
func newManager(t testing.TB, restCfg *rest.Config, o controllers.Options, tune func(*ctrl.Options)) ctrl.Manager {
	t.Helper()
	mo := ctrl.Options{
		Scheme:                 scheme,
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		Controller:             config.Controller{SkipNameValidation: ptr.To(true)},
		Cache:                  cache.Options{DefaultTransform: cache.TransformStripManagedFields()},
	}
	if o.Routing() {
		// As internal/manager does: routes, Secrets and Certificates are
		// cached in the ingress namespace only.
		httpClient, err := rest.HTTPClientFor(restCfg)
		if err != nil {
			t.Fatalf("http client: %v", err)
		}
		mapper, err := apiutil.NewDynamicRESTMapper(restCfg, httpClient)
		if err != nil {
			t.Fatalf("rest mapper: %v", err)
		}
		if mo.Cache.ByObject, o.CertManager, err = o.CacheByObject(mapper); err != nil {
			t.Fatalf("cache by object: %v", err)
		}
	}
	if tune != nil {
		tune(&mo)
	}
	mgr, err := ctrl.NewManager(restCfg, mo)
	if err != nil {
		t.Fatalf("new manager: %v", err)
	}
	if err := fieldindex.Setup(ctx, mgr.GetFieldIndexer()); err != nil {
		t.Fatalf("field indexes: %v", err)
	}
	if err := controllers.Setup(mgr, o); err != nil {
		t.Fatalf("controllers: %v", err)
	}
	return mgr
}

// start runs mgr until the returned stop is called or the test ends.
func start(t testing.TB, mgr ctrl.Manager) (stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := mgr.Start(ctx); err != nil {
			t.Errorf("manager: %v", err)
		}
	}()
	var stopped atomic.Bool
	stop = func() {
		if stopped.CompareAndSwap(false, true) {
			cancel()
			<-done
		}
	}
	t.Cleanup(stop)
	return stop
}

// startControllers starts a DNS server (newDNS) and a manager with
// controllers configured for it, and returns the server.
func startControllers(t testing.TB) *dnstest.Server {
	srv := newDNS(t)
	start(t, newManager(t, cfg, testOptions(srv), nil))
	return srv
}

var nsCounter atomic.Int64

// newNamespace creates a namespace whose name sorts after every earlier
// one, so claims tied on creationTimestamp break in creation order.
func newNamespace(t testing.TB, prefix string) string {
	t.Helper()
	name := fmt.Sprintf("%s-%03d-%d", prefix, nsCounter.Add(1), time.Now().UnixNano()%1e6)
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if err := k8sClient.Create(ctx, ns); err != nil {
		t.Fatalf("create namespace: %v", err)
	}
	// envtest runs no namespace controller, so a namespace's objects would
	// outlive its test: an Active Domain left behind would get routes in a
	// later test's Gateways and claim hostnames. Delete them when the test
	// ends (before its manager stops, which was started earlier).
	t.Cleanup(func() {
		for _, o := range []client.Object{&kurzv1alpha1.Link{}, &kurzv1alpha1.Domain{}} {
			if err := k8sClient.DeleteAllOf(ctx, o, client.InNamespace(name)); err != nil {
				t.Errorf("clean up namespace %s: %v", name, err)
			}
		}
	})
	return name
}

// setHostname changes d's hostname as kubectl edit would: it reads d and
// updates it, and retries when a status write of the controller came
// between the two.
func setHostname(g Gomega, d *kurzv1alpha1.Domain, hostname string) {
	g.Expect(retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if err := k8sClient.Get(ctx, client.ObjectKeyFromObject(d), d); err != nil {
			return err
		}
		d.Spec.Domain = kurzv1alpha1.Hostname(hostname)
		return k8sClient.Update(ctx, d)
	})).To(Succeed())
}

func newDomain(ns, name, host string) *kurzv1alpha1.Domain {
	return &kurzv1alpha1.Domain{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec:       kurzv1alpha1.DomainSpec{Domain: kurzv1alpha1.Hostname(host)},
	}
}

func newLink(ns, name, host, key string) *kurzv1alpha1.Link {
	return &kurzv1alpha1.Link{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: kurzv1alpha1.LinkSpec{
			Domain: kurzv1alpha1.Hostname(host),
			Key:    key,
			URL:    kurzv1alpha1.URL("https://example.com/" + key),
		},
	}
}

// Timeouts are generous: other packages' tests share the two cores.
const (
	timeout = 30 * time.Second
	poll    = 50 * time.Millisecond
)

// The Ready conditions the tests wait for, as readyOf reads them.
const (
	pending     = "False/" + kurzv1alpha1.ReasonVerificationPending
	verified    = "True/" + kurzv1alpha1.ReasonVerified
	claimed     = "False/" + kurzv1alpha1.ReasonDomainClaimed
	txtRequired = "False/" + kurzv1alpha1.ReasonTXTRequired

	linkActive         = "True/" + kurzv1alpha1.ReasonActive
	linkDomainNotFound = "False/" + kurzv1alpha1.ReasonDomainNotFound
	linkKeyConflict    = "False/" + kurzv1alpha1.ReasonKeyConflict
	linkExpired        = "True/" + kurzv1alpha1.ReasonExpired
)

// readyOf fetches obj from the API server and returns its Ready condition
// as "Status/Reason" ("" when it has none).
func readyOf(obj client.Object) func(Gomega) string {
	return func(g Gomega) string {
		g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(obj), obj)).To(Succeed())
		var conds []metav1.Condition
		switch o := obj.(type) {
		case *kurzv1alpha1.Link:
			conds = o.Status.Conditions
		case *kurzv1alpha1.Domain:
			conds = o.Status.Conditions
		}
		c := meta.FindStatusCondition(conds, kurzv1alpha1.ConditionReady)
		if c == nil {
			return ""
		}
		return string(c.Status) + "/" + c.Reason
	}
}

// objectOf fetches object ns/name of type T (nil when there is none).
func objectOf[T any, P objectPtr[T]](ns, name string) func(Gomega) P {
	return func(g Gomega) P {
		obj := P(new(T))
		err := k8sClient.Get(ctx, types.NamespacedName{Namespace: ns, Name: name}, obj)
		if apierrors.IsNotFound(err) {
			return nil
		}
		g.Expect(err).NotTo(HaveOccurred())
		return obj
	}
}

// objectPtr is a pointer to an API type T, so objectOf can allocate one.
type objectPtr[T any] interface {
	*T
	client.Object
}

// eventReasons returns the reasons of the events about obj, in no order.
func eventReasons(obj client.Object) func(Gomega) []string {
	return func(g Gomega) []string {
		var list eventsv1.EventList
		g.Expect(k8sClient.List(ctx, &list, client.InNamespace(obj.GetNamespace()))).To(Succeed())
		var out []string
		for _, e := range list.Items {
			if e.Regarding.Name == obj.GetName() && e.Regarding.UID == obj.GetUID() {
				out = append(out, e.Reason)
			}
		}
		return out
	}
}

// newBareManager builds a manager without controllers, to test Setup.
func newBareManager() (ctrl.Manager, error) {
	return ctrl.NewManager(cfg, ctrl.Options{
		Scheme:                 scheme,
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		Controller:             config.Controller{SkipNameValidation: ptr.To(true)},
	})
}

var hostSuffixes sync.Map // testing.TB -> string

// host makes a hostname unique to the running test (and to each run of it
// under -count), so Domains left by earlier tests never claim it:
// host(t, "go.kc.test") is "go.kc-r7.test".
func host(t testing.TB, name string) string {
	s, _ := hostSuffixes.LoadOrStore(t, fmt.Sprintf("r%d", nsCounter.Add(1)))
	return strings.TrimSuffix(name, ".test") + "-" + s.(string) + ".test"
}
