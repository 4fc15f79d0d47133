package apiserver

import (
	"context"
	"flag"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"os"
	"testing"
	"time"

	"go.uber.org/zap/zapcore"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/client-go/kubernetes"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	kurzv1alpha1 "github.com/kurz-dev/kurz/api/v1alpha1"
	"github.com/kurz-dev/kurz/internal/cacheslim"
	"github.com/kurz-dev/kurz/internal/fieldindex"
	"github.com/kurz-dev/kurz/internal/testenv"
)

// testRateLimit is the per-ServiceAccount limit of the limited server,
// testUnauthenticatedLimit its per-address limit for unknown tokens.
const (
	testRateLimit            = 3
	testUnauthenticatedLimit = 5
)

var (
	env *envtest.Environment
	// k8s talks to kube-apiserver directly, as kubectl would.
	k8s client.Client
	// clientset creates ServiceAccount tokens (TokenRequest).
	clientset *kubernetes.Clientset
	// baseURL is the API server under test; limitedURL is a second one on
	// the same manager with a rate limit of testRateLimit a minute, a limit
	// of testUnauthenticatedLimit unknown tokens a minute per client
	// address, and 127.0.0.1 as a trusted proxy (tests name their client
	// address in X-Forwarded-For).
	baseURL, limitedURL string
	// tokenReviews counts the TokenReviews both servers send.
	tokenReviews = &reviewCounter{counts: map[string]int{}}
)

func TestMain(m *testing.M) {
	flag.Parse()
	// Fuzzing and benchmarks of this package need no control plane.
	if f := flag.Lookup("test.fuzz"); f != nil && f.Value.String() != "" {
		os.Exit(m.Run())
	}
	if f := flag.Lookup("test.run"); f != nil && f.Value.String() == "^$" {
		os.Exit(m.Run())
	}
	code, err := runWithControlPlane(m)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Exit(code)
}

func runWithControlPlane(m *testing.M) (int, error) {
	ctrl.SetLogger(zap.New(zap.WriteTo(os.Stderr), zap.Level(zapLevel())))
	e, cfg, err := testenv.Start()
	if err != nil {
		return 0, err
	}
	env = e
	defer func() {
		if err := env.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, "stop control plane:", err)
		}
	}()

	scheme := runtime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(scheme))
	utilruntime.Must(kurzv1alpha1.AddToScheme(scheme))
	if k8s, err = client.New(cfg, client.Options{Scheme: scheme}); err != nil {
		return 0, err
	}
	if clientset, err = kubernetes.NewForConfig(cfg); err != nil {
		return 0, err
	}
	if err := applyUserRoles(context.Background()); err != nil {
		return 0, err
	}

	// The manager as internal/manager builds it, with only the API server;
	// its requests pass tokenReviews' counter.
	mgrCfg := rest.CopyConfig(cfg)
	mgrCfg.Wrap(tokenReviews.wrap)
	mgr, err := ctrl.NewManager(mgrCfg, ctrl.Options{
		Scheme:                 scheme,
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		Cache:                  cache.Options{DefaultTransform: cacheslim.Transform},
	})
	if err != nil {
		return 0, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	if err := fieldindex.Setup(ctx, mgr.GetFieldIndexer()); err != nil {
		cancel()
		return 0, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		cancel()
		return 0, err
	}
	limitedLn, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		cancel()
		return 0, err
	}
	baseURL, limitedURL = "http://"+ln.Addr().String(), "http://"+limitedLn.Addr().String()
	o := DefaultOptions()
	o.Listener = ln
	o.RateLimit = 0                // tests make many requests with one token
	o.UnauthenticatedRateLimit = 0 // and many tokens from one address
	if err := Setup(mgr, o); err != nil {
		cancel()
		return 0, err
	}
	lo := DefaultOptions()
	lo.Listener = limitedLn
	lo.RateLimit = testRateLimit
	lo.UnauthenticatedRateLimit = testUnauthenticatedLimit
	lo.TrustedProxies = []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}
	// Long enough that no good answer expires during a flood test.
	lo.AuthCacheTTL = time.Minute
	if err := Setup(mgr, lo); err != nil {
		cancel()
		return 0, err
	}

	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			fmt.Fprintln(os.Stderr, "manager:", err)
		}
	}()
	if err := waitForServer(baseURL, done); err != nil {
		return 0, err
	}
	if err := waitForServer(limitedURL, done); err != nil {
		return 0, err
	}
	return m.Run(), nil
}

// waitForServer waits until the API answers (the manager serves it once
// the caches are in sync).
func waitForServer(base string, done <-chan error) error {
	deadline := time.Now().Add(2 * time.Minute)
	for time.Now().Before(deadline) {
		select {
		case err := <-done:
			return fmt.Errorf("manager stopped: %v", err)
		default:
		}
		resp, err := http.Get(base + "/api/v1/openapi.json")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		time.Sleep(100 * time.Millisecond) // polling a server that is starting
	}
	return fmt.Errorf("API server at %s did not start", base)
}

func zapLevel() zapcore.Level {
	if testing.Verbose() {
		return zapcore.DebugLevel
	}
	return zapcore.ErrorLevel
}
