package devenv_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// kurzBin is bin/kurz, built once for the tests that run it as a user would.
var kurzBin string

func TestMain(m *testing.M) {
	if os.Getenv("KUBEBUILDER_ASSETS") == "" {
		fmt.Fprintln(os.Stderr, "KUBEBUILDER_ASSETS is not set: run the tests with `make test`, "+
			"or build the control plane with `make control-plane` and export KUBEBUILDER_ASSETS=$PWD/bin/k8s")
		os.Exit(1)
	}
	dir, err := os.MkdirTemp("", "kurz-devenv-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	kurzBin = filepath.Join(dir, "kurz")
	build := exec.Command("go", "build", "-o", kurzBin, "github.com/kurz-dev/kurz/cmd/kurz")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintf(os.Stderr, "build kurz: %v\n", err)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}
