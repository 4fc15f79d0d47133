package controllers_test

import (
	"testing"

	. "github.com/onsi/gomega"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kurzv1alpha1 "github.com/kurz-dev/kurz/api/v1alpha1"
	"github.com/kurz-dev/kurz/internal/dns/dnstest"
)

// Steps the controller scenarios share, so each test reads as what it
// changes and what it expects.

// namespaceAndHost creates a namespace named after prefix and returns it
// with the hostname go.<prefix>.test (made unique to t by host).
func namespaceAndHost(t *testing.T, prefix string) (ns, hostname string) {
	t.Helper()
	return newNamespace(t, prefix), host(t, "go."+prefix+".test")
}

// startWithDomain starts the controllers and a namespace (namespaceAndHost)
// holding Domain "go" for its hostname, and returns the namespace and the
// hostname.
func startWithDomain(t *testing.T, prefix string) (ns, hostname string) {
	t.Helper()
	startControllers(t)
	ns, hostname = namespaceAndHost(t, prefix)
	NewWithT(t).Expect(k8sClient.Create(ctx, newDomain(ns, "go", hostname))).To(Succeed())
	return ns, hostname
}

// update reads obj afresh, applies change (which edits obj) and writes it
// back.
func update(g Gomega, obj client.Object, change func()) {
	// The controllers write status meanwhile: a conflict is read again,
	// as kubectl edit would.
	g.Expect(retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if err := k8sClient.Get(ctx, client.ObjectKeyFromObject(obj), obj); err != nil {
			return err
		}
		change()
		return k8sClient.Update(ctx, obj)
	})).To(Succeed())
}

// targetedHost is host(t, name) with a CNAME to the redirect target in srv,
// as its DNS owner publishes to point it at kurz: that proves a Domain of
// it by target, enough for an uncontested claim.
func targetedHost(t testing.TB, srv *dnstest.Server, name string) string {
	h := host(t, name)
	srv.Set(h, dnsTypeCNAME, targetHost)
	return h
}

// createDomain creates Domain ns/name for hostname and waits until its
// Ready condition reads want (createReady).
func createDomain(g Gomega, ns, name, hostname, want string) *kurzv1alpha1.Domain {
	d := newDomain(ns, name, hostname)
	createReady(g, d, want)
	return d
}

// createReady creates obj and waits until its Ready condition reads want
// ("Status/Reason", as readyOf gives it).
func createReady(g Gomega, obj client.Object, want string) {
	g.Expect(k8sClient.Create(ctx, obj)).To(Succeed())
	g.Eventually(readyOf(obj), timeout, poll).Should(Equal(want))
}
