// Package e2e drives a real `bin/kurz dev` the way its users do: HTTP clients
// with the token from DIR/token, and kubectl with DIR/kubeconfig.
package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/kurz-dev/kurz/internal/testenv"
)

// flushInterval is short so click counts reach Kubernetes quickly in tests.
const flushInterval = time.Second

var (
	kurzBin    string
	kubectlBin string
	dev        *kurzDev
)

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	assets, err := testenv.Assets()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	kubectlBin = filepath.Join(assets, "kubectl")

	tmp, err := os.MkdirTemp("", "kurz-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(tmp)

	// Build kurz with `make build` itself (its flags and version stamp),
	// into the temp dir so tests never race a developer's own build. The
	// caller's MAKEFLAGS (a make test's) stay out of it.
	root := testenv.RepoRoot()
	kurzBin = filepath.Join(tmp, "kurz")
	build := exec.Command("make", "--no-print-directory", "build", "BIN="+tmp)
	build.Dir = root
	build.Env = append(os.Environ(), "MAKEFLAGS=", "MFLAGS=")
	build.Stdout, build.Stderr = os.Stdout, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "build kurz:", err)
		return 1
	}
	code := m.Run()
	if dev != nil {
		_ = dev.cmd.Process.Signal(syscall.SIGTERM)
		if err := <-dev.done; err != nil {
			fmt.Fprintln(os.Stderr, "kurz dev exited after SIGTERM:", err)
		}
		os.RemoveAll(dev.dataDir)
	}
	return code
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
