package testenv

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// errNoControlPlane is the one message every suite gives when it cannot
// find kube-apiserver and etcd.
var errNoControlPlane = errors.New("KUBEBUILDER_ASSETS is not set: run the tests with `make test`, " +
	"or build the control plane with `make control-plane` and export KUBEBUILDER_ASSETS=$PWD/bin/k8s")

// Assets returns the directory holding kube-apiserver, etcd and kubectl
// ($KUBEBUILDER_ASSETS). It refuses to guess, so that envtest never looks
// elsewhere, and names the command that provides the binaries.
func Assets() (string, error) {
	dir := os.Getenv("KUBEBUILDER_ASSETS")
	if dir == "" {
		return "", errNoControlPlane
	}
	return dir, nil
}

// RepoRoot is the repository root, found from this file's location so tests
// of any package can reach config/.
func RepoRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..")
}

// Binaries is the first line of a test that runs etcd or kube-apiserver
// itself (not through Main's suite): it returns Assets, fails t without
// them, and skips t under -short, as Need does.
func Binaries(t testing.TB) string {
	t.Helper()
	if testing.Short() {
		t.Skip("runs kube-apiserver and etcd: runs in `make test`, not under -short")
	}
	dir, err := Assets()
	if err != nil {
		t.Fatal(err)
	}
	return dir
}
