package restapi

import (
	"context"
	"flag"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"os"
	"path/filepath"
	"testing"
	"time"

	"go.uber.org/zap/zapcore"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/kurz-dev/kurz/internal/analytics/sqlite"
	"github.com/kurz-dev/kurz/internal/cacheslim"
	"github.com/kurz-dev/kurz/internal/consolesession"
	"github.com/kurz-dev/kurz/internal/fieldindex"
	kurzscheme "github.com/kurz-dev/kurz/internal/scheme"
	"github.com/kurz-dev/kurz/internal/testenv"
)

// testRateLimit is the per-ServiceAccount limit of the limited server,
// testUnauthenticatedLimit its per-address limit for unknown tokens.
const (
	testRateLimit            = 3
	testUnauthenticatedLimit = 5
)

var (
	env *testenv.Env
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
	// analyticsURL is a third server on the same manager with analyticsStore
	// (SQLite in a temporary directory) answering its analytics endpoints;
	// baseURL and limitedURL have none (503). Tests write known batches to
	// the store, each for its own workspace's links.
	analyticsURL   string
	analyticsStore *sqlite.Store
	// sessionKeyFile is the console session key baseURL and analyticsURL
	// share (two replicas); limitedURL has a random key of its own.
	sessionKeyFile string
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
	testenv.Main(m, testenv.Options{}, setupSuite)
}

// setupSuite starts the manager as internal/manager builds it, with only
// the API server (twice: baseURL and limitedURL); its requests pass
// tokenReviews' counter and linkWrites'.
func setupSuite(e *testenv.Env) error {
	ctrl.SetLogger(zap.New(zap.WriteTo(os.Stderr), zap.Level(zapLevel())))
	env, k8s = e, e.Client
	var err error
	if clientset, err = kubernetes.NewForConfig(e.Config); err != nil {
		return err
	}
	if err := applyUserRoles(context.Background()); err != nil {
		return err
	}

	keyDir, err := os.MkdirTemp("", "kurz-restapi-session-")
	if err != nil {
		return err
	}
	e.OnStop(func() { _ = os.RemoveAll(keyDir) })
	sessionKeyFile = filepath.Join(keyDir, "key")
	if err := consolesession.WriteKeyFile(sessionKeyFile); err != nil {
		return err
	}

	mgrCfg := rest.CopyConfig(e.Config)
	mgrCfg.Wrap(tokenReviews.wrap)
	mgrCfg.Wrap(linkWrites.wrap)
	mgr, err := ctrl.NewManager(mgrCfg, ctrl.Options{
		Scheme:                 kurzscheme.Scheme,
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		Cache:                  cache.Options{DefaultTransform: cacheslim.Transform},
	})
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(context.Background())
	if err := fieldindex.Setup(ctx, mgr.GetFieldIndexer()); err != nil {
		cancel()
		return err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		cancel()
		return err
	}
	limitedLn, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		cancel()
		return err
	}
	baseURL, limitedURL = "http://"+ln.Addr().String(), "http://"+limitedLn.Addr().String()
	o := DefaultOptions()
	o.Listener = ln
	o.RateLimit = 0                // tests make many requests with one token
	o.UnauthenticatedRateLimit = 0 // and many tokens from one address
	o.ConsoleSessionKeyFile = sessionKeyFile
	if err := Setup(mgr, o); err != nil {
		cancel()
		return err
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
		return err
	}

	if err := setupAnalyticsServer(ctx, mgr, e); err != nil {
		cancel()
		return err
	}

	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	e.OnStop(func() {
		cancel()
		if err := <-done; err != nil {
			fmt.Fprintln(os.Stderr, "manager:", err)
		}
	})
	if err := waitForServer(baseURL, done); err != nil {
		return err
	}
	if err := waitForServer(limitedURL, done); err != nil {
		return err
	}
	return waitForServer(analyticsURL, done)
}

// setupAnalyticsServer opens analyticsStore in a temporary directory and
// adds the API server at analyticsURL that answers analytics from it.
func setupAnalyticsServer(ctx context.Context, mgr ctrl.Manager, e *testenv.Env) error {
	dir, err := os.MkdirTemp("", "kurz-restapi-analytics-")
	if err != nil {
		return err
	}
	so := sqlite.DefaultOptions()
	so.Path = filepath.Join(dir, "analytics.db")
	store, err := sqlite.Open(ctx, so)
	if err != nil {
		_ = os.RemoveAll(dir)
		return err
	}
	e.OnStop(func() {
		_ = store.Close()
		_ = os.RemoveAll(dir)
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	analyticsURL, analyticsStore = "http://"+ln.Addr().String(), store
	o := DefaultOptions()
	o.Listener = ln
	o.RateLimit = 0
	o.UnauthenticatedRateLimit = 0
	o.Analytics = store
	o.ConsoleSessionKeyFile = sessionKeyFile
	return Setup(mgr, o)
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
