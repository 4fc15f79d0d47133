package devenv_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/kurz-dev/kurz/internal/testenv"
)

// kurzBin is bin/kurz, built once for the tests that run it as a user would.
var kurzBin string

func TestMain(m *testing.M) {
	if _, err := testenv.Assets(); err != nil {
		fmt.Fprintln(os.Stderr, err)
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
