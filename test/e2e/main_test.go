// Package e2e drives a real `bin/kurz dev` the way its users do: HTTP clients
// with the token from DIR/token, and kubectl with DIR/kubeconfig.
package e2e

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/kurz-dev/kurz/internal/testenv"
)

// flushInterval is short so click counts reach Kubernetes quickly in tests.
const flushInterval = time.Second

var (
	kubectlBin string
	dev        *kurzDev
)

// TestMain builds and starts nothing: every test here runs bin/kurz
// (testenv.Kurz builds it at the first, and skips under -short, as the
// whole package then is).
func TestMain(m *testing.M) {
	flag.Parse()
	code := m.Run()
	if dev != nil {
		_ = dev.cmd.Process.Signal(syscall.SIGTERM)
		if err := <-dev.done; err != nil {
			fmt.Fprintln(os.Stderr, "kurz dev exited after SIGTERM:", err)
		}
		os.RemoveAll(dev.dataDir)
	}
	testenv.RemoveKurz()
	os.Exit(code)
}

// kurzBin is bin/kurz (testenv.Kurz), and kubectl beside the control plane.
func kurzBin(t testing.TB) string {
	t.Helper()
	bin := testenv.Kurz(t)
	kubectlBin = filepath.Join(testenv.Binaries(t), "kubectl")
	return bin
}

// devT starts the shared kurz dev on first use. Tests in this package run one
// after another against it, as one user session would.
func devT(t *testing.T) *kurzDev {
	t.Helper()
	if dev == nil {
		dir, err := os.MkdirTemp("", "kurz-e2e-data-")
		if err != nil {
			t.Fatal(err)
		}
		dev = startKurzDev(t, dir, testenv.FreeAddr(t), testenv.FreeAddr(t))
	}
	return dev
}
