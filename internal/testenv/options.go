package testenv

import (
	"time"

	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

// Options say what a suite's control plane needs beyond kurz's CRDs and a
// client. The zero value is what most suites want.
type Options struct {
	// CRDPaths are directories of more CRDs to install, after
	// config/crd/bases.
	CRDPaths []string
	// Webhooks are admission webhooks to install; envtest serves them the
	// certificates and writes their configurations.
	Webhooks envtest.WebhookInstallOptions
	// APIServerFlags are set on kube-apiserver, such as
	// {"request-timeout": "5s"}.
	APIServerFlags map[string]string
	// Restartable keeps kube-apiserver's certificates in a directory of
	// its own, so a test can stop and start it
	// (Env.ControlPlane.APIServer) on the same port with the same CA and
	// its clients still trust it; envtest would otherwise make a new CA on
	// restart.
	Restartable bool
	// StopTimeout bounds the stop of the control plane; kube-apiserver
	// drains its requests (the managers' watches) on SIGTERM, which can
	// take longer than envtest's default. Zero keeps the default.
	StopTimeout time.Duration
	// Admin adds a cluster admin (group system:masters) for tests that run
	// kubectl: Env.Admin.Kubectl().
	Admin bool
}
