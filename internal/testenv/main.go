package testenv

import (
	"flag"
	"fmt"
	"io"
	"os"
	"sync"
	"testing"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
)

// Main is a suite's TestMain. The control plane (started with o, then
// handed to setup, which keeps what it needs of env and may be nil) starts
// when the first test calls Need (every test that talks to it calls Need
// first), so the suite's pure tests (status tables, parsers) run in a
// second without it, and a run that selects only those (`go test -run
// Table`, `make test-short`) never starts one. After the tests it stops
// the control plane and the PostgreSQL cluster of Postgres, if they
// started, and exits. Logs are discarded unless KURZ_TEST_LOG is set: the
// tests assert on behaviour, not on logs. setup may set a logger of its
// own.
func Main(m *testing.M, o Options, setup func(env *Env) error) {
	os.Exit(run(m, o, setup))
}

// suite is the package's control plane, started by the first Need.
var suite struct {
	once  sync.Once
	o     Options
	setup func(*Env) error
	env   *Env
	err   error
}

func run(m *testing.M, o Options, setup func(*Env) error) int {
	flag.Parse() // testing.Short needs the flags; m.Run parses them anyway
	logOut := io.Discard
	if os.Getenv("KURZ_TEST_LOG") != "" {
		logOut = os.Stderr
	}
	ctrl.SetLogger(zap.New(zap.WriteTo(logOut), zap.UseDevMode(true)))
	suite.o, suite.setup = o, setup
	mainRunning.Store(true)
	code := m.Run()
	if err := stopSharedPostgres(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		code = max(code, 1)
	}
	if suite.env != nil {
		if err := suite.env.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			code = max(code, 1)
		}
	}
	return code
}

// Need is the first line of every test of a Main suite that talks to the
// control plane: it starts the suite's control plane on the first call
// (and runs the suite's setup), fails t if it cannot, and returns it.
// Under -short it skips t instead: `make test-short` runs the pure tests
// only, `make test` every test.
func Need(t testing.TB) *Env {
	t.Helper()
	if testing.Short() {
		t.Skip("needs kube-apiserver and etcd: runs in `make test`, not under -short")
	}
	suite.once.Do(startSuite)
	if suite.err != nil {
		t.Fatal(suite.err)
	}
	return suite.env
}

func startSuite() {
	env, err := Start(suite.o)
	if err != nil {
		suite.err = err
		return
	}
	suite.env = env
	if suite.setup != nil {
		if err := suite.setup(env); err != nil {
			suite.err = fmt.Errorf("set up the suite: %w", err)
		}
	}
}
