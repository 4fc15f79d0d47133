// Package testenv starts the real control plane (etcd and kube-apiserver from
// `make control-plane`) for the tests of other packages, with kurz's CRDs
// installed. It is imported by tests only.
package testenv

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"

	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

// RepoRoot is the repository root, found from this file's location so tests
// of any package can reach config/.
func RepoRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..")
}

// Start starts etcd and kube-apiserver with the CRDs of config/crd/bases.
// It refuses to run without KUBEBUILDER_ASSETS, naming the command that
// provides it, instead of letting envtest look elsewhere.
func Start() (*envtest.Environment, *rest.Config, error) {
	if os.Getenv("KUBEBUILDER_ASSETS") == "" {
		return nil, nil, fmt.Errorf("KUBEBUILDER_ASSETS is not set: run the tests with `make test`, " +
			"or build the control plane with `make control-plane` and export KUBEBUILDER_ASSETS=$PWD/bin/k8s")
	}
	env := &envtest.Environment{
		CRDDirectoryPaths:     []string{filepath.Join(RepoRoot(), "config", "crd", "bases")},
		ErrorIfCRDPathMissing: true,
	}
	cfg, err := env.Start()
	if err != nil {
		return nil, nil, fmt.Errorf("start control plane: %w", err)
	}
	return env, cfg, nil
}

// Admin adds a cluster admin (group system:masters) to env's control plane,
// for tests that run kubectl against it: admin.Kubectl(). It replaces the
// deprecated env.ControlPlane.KubeCtl().
func Admin(env *envtest.Environment) (*envtest.AuthenticatedUser, error) {
	return env.AddUser(envtest.User{Name: "kurz-test-admin", Groups: []string{"system:masters"}}, nil)
}
