package controllers_test

import (
	"context"
	"testing"

	. "github.com/onsi/gomega"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Steps the controller scenarios share, so each test reads as what it
// changes and what it expects.

// startWithDomain starts the controllers and a namespace (named after
// prefix) holding Domain "go" for go.<prefix>.test, and returns the
// namespace and that hostname (made unique to t by host).
func startWithDomain(t *testing.T, prefix string) (ns, hostname string) {
	t.Helper()
	startControllers(t, newDNS(t))
	ns, hostname = newNamespace(t, prefix), host(t, "go."+prefix+".test")
	NewWithT(t).Expect(k8sClient.Create(context.Background(), newDomain(ns, "go", hostname))).To(Succeed())
	return ns, hostname
}

// update reads obj afresh, applies change (which edits obj) and writes it
// back.
func update(g Gomega, obj client.Object, change func()) {
	ctx := context.Background()
	g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(obj), obj)).To(Succeed())
	change()
	g.Expect(k8sClient.Update(ctx, obj)).To(Succeed())
}

// createReady creates obj and waits until its Ready condition reads want
// ("Status/Reason", as readyOf gives it).
func createReady(g Gomega, obj client.Object, want string) {
	g.Expect(k8sClient.Create(context.Background(), obj)).To(Succeed())
	g.Eventually(readyOf(obj), timeout, poll).Should(Equal(want))
}
