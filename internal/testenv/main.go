package testenv

import (
	"fmt"
	"io"
	"os"
	"testing"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
)

// Main is a suite's TestMain: it starts a control plane with o, lets setup
// keep what it needs of env (setup may be nil; Env.OnStop registers its
// teardown), runs the tests, stops the control plane and exits. Logs are
// discarded unless KURZ_TEST_LOG is set: the tests assert on behaviour, not
// on logs. setup may set a logger of its own.
func Main(m *testing.M, o Options, setup func(env *Env) error) {
	os.Exit(run(m, o, setup))
}

func run(m *testing.M, o Options, setup func(*Env) error) int {
	logOut := io.Discard
	if os.Getenv("KURZ_TEST_LOG") != "" {
		logOut = os.Stderr
	}
	ctrl.SetLogger(zap.New(zap.WriteTo(logOut), zap.UseDevMode(true)))
	env, err := Start(o)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer func() {
		if err := env.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, err)
		}
	}()
	if setup != nil {
		if err := setup(env); err != nil {
			fmt.Fprintln(os.Stderr, "set up the suite:", err)
			return 1
		}
	}
	return m.Run()
}
