// Package testenv starts the real control plane (etcd and kube-apiserver
// from `make control-plane`) for the tests of other packages, with kurz's
// CRDs installed, a client on kurz's one scheme, and one message when the
// control plane is missing. A suite's TestMain is a call to Main; what a
// suite needs beyond that (a kubectl admin, kube-apiserver flags, a
// restartable kube-apiserver, more CRDs, webhooks) are Options. It is
// imported by tests only.
package testenv
