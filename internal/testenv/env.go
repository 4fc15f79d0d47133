package testenv

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/kurz-dev/kurz/internal/scheme"
)

// Env is a running control plane. The embedded envtest.Environment gives
// its Config and ControlPlane.
type Env struct {
	*envtest.Environment
	// Client talks to kube-apiserver directly (no cache), on kurz's scheme.
	Client client.Client
	// Admin runs kubectl as a cluster admin; nil unless Options.Admin.
	Admin *envtest.AuthenticatedUser

	certDir string
	onStop  []func()
}

// Start starts etcd and kube-apiserver with the CRDs of config/crd/bases
// (and o's). Stop it with Stop.
func Start(o Options) (*Env, error) {
	if _, err := Assets(); err != nil {
		return nil, err
	}
	e := &Env{Environment: &envtest.Environment{
		CRDDirectoryPaths:       append([]string{filepath.Join(RepoRoot(), "config", "crd", "bases")}, o.CRDPaths...),
		ErrorIfCRDPathMissing:   true,
		WebhookInstallOptions:   o.Webhooks,
		ControlPlaneStopTimeout: o.StopTimeout,
		Scheme:                  scheme.Scheme,
	}}
	if o.Restartable {
		dir, err := os.MkdirTemp("", "kurz-test-apiserver-")
		if err != nil {
			return nil, err
		}
		e.certDir = dir
		e.ControlPlane.APIServer = &envtest.APIServer{CertDir: dir}
	}
	for name, value := range o.APIServerFlags {
		e.ControlPlane.GetAPIServer().Configure().Set(name, value)
	}
	cfg, err := e.Start() // envtest.Environment.Start
	if err != nil {
		e.removeCertDir()
		return nil, fmt.Errorf("start control plane: %w", err)
	}
	if e.Client, err = client.New(cfg, client.Options{Scheme: scheme.Scheme}); err != nil {
		return nil, errors.Join(fmt.Errorf("client: %w", err), e.Stop())
	}
	if o.Admin {
		if e.Admin, err = e.AddUser(envtest.User{Name: "kurz-test-admin", Groups: []string{"system:masters"}}, nil); err != nil {
			return nil, errors.Join(fmt.Errorf("add admin: %w", err), e.Stop())
		}
	}
	return e, nil
}

// OnStop registers f to run when the control plane stops, before it does
// (last registered first): managers a suite started stop while
// kube-apiserver still answers them.
func (e *Env) OnStop(f func()) { e.onStop = append(e.onStop, f) }

// Stop runs the OnStop functions, then stops etcd and kube-apiserver.
func (e *Env) Stop() error {
	for _, f := range slices.Backward(e.onStop) {
		f()
	}
	e.onStop = nil
	defer e.removeCertDir()
	if err := e.Environment.Stop(); err != nil {
		return fmt.Errorf("stop control plane: %w", err)
	}
	return nil
}

func (e *Env) removeCertDir() {
	if e.certDir != "" {
		_ = os.RemoveAll(e.certDir)
	}
}
