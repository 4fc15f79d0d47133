package testenv

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
)

// built is bin/kurz as the suites that run it as a user would build it,
// once per test binary.
var built struct {
	once      sync.Once
	dir, path string
	err       error
}

// Kurz returns the path of a kurz binary built with `make build` itself
// (its flags and version stamp) into a temporary directory, so tests never
// race a developer's own bin/kurz. The first call builds it; RemoveKurz,
// from TestMain, removes it. Under -short it skips t, as Need does: a
// test that runs kurz needs the control plane too.
func Kurz(t testing.TB) string {
	t.Helper()
	if testing.Short() {
		t.Skip("runs bin/kurz against kube-apiserver and etcd: runs in `make test`, not under -short")
	}
	if _, err := Assets(); err != nil {
		t.Fatal(err)
	}
	built.once.Do(buildKurz)
	if built.err != nil {
		t.Fatal(built.err)
	}
	return built.path
}

func buildKurz() {
	dir, err := os.MkdirTemp("", "kurz-test-bin-")
	if err != nil {
		built.err = err
		return
	}
	built.dir = dir
	// The caller's MAKEFLAGS (a make test's) stay out of it.
	cmd := exec.Command("make", "--no-print-directory", "build", "BIN="+dir)
	cmd.Dir = RepoRoot()
	cmd.Env = append(os.Environ(), "MAKEFLAGS=", "MFLAGS=")
	if out, err := cmd.CombinedOutput(); err != nil {
		built.err = fmt.Errorf("build kurz: %w\n%s", err, out)
		return
	}
	built.path = filepath.Join(dir, "kurz")
}

// RemoveKurz removes the binary Kurz built, if it built one.
func RemoveKurz() {
	if built.dir != "" {
		_ = os.RemoveAll(built.dir)
	}
}
