package controllers_test

import (
	"sync/atomic"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kurzv1alpha1 "github.com/kurz-dev/kurz/api/v1alpha1"
	"github.com/kurz-dev/kurz/internal/testenv"
)

// TestStatusWriteSurvivesALaggingCache: the Link controller's own status
// write reaches its cache late (as on a loaded kube-apiserver), and the
// next reconcile, which must write a status equal to the one the lagging
// cache still shows, writes it: the Link serves again, not stuck at the
// lagging status. Here a Domain is deleted (its Link goes DomainNotFound,
// which the cache sees 3 s late) and recreated at once.
func TestStatusWriteSurvivesALaggingCache(t *testing.T) {
	testenv.Need(t)
	g := NewWithT(t)
	var lag atomic.Bool
	lagging := func(o any) (any, error) {
		if l, ok := o.(*kurzv1alpha1.Link); ok && lag.Load() && readyReason(l) == kurzv1alpha1.ReasonDomainNotFound {
			time.Sleep(3 * time.Second) // holds this informer's events back
		}
		return cache.TransformStripManagedFields()(o)
	}
	srv := newDNS(t)
	start(t, newManager(t, cfg, testOptions(srv), func(o *ctrl.Options) {
		o.Cache.ByObject = map[client.Object]cache.ByObject{&kurzv1alpha1.Link{}: {Transform: lagging}}
	}))
	ns := newNamespace(t, "lag")
	hostname := host(t, "go.lag.test")
	g.Expect(k8sClient.Create(ctx, newDomain(ns, "go", hostname))).To(Succeed())
	link := newLink(ns, "l", hostname, "k")
	createReady(g, link, linkActive)

	lag.Store(true)
	g.Expect(k8sClient.Delete(ctx, newDomain(ns, "go", hostname))).To(Succeed())
	g.Eventually(readyOf(link), timeout, poll).Should(Equal(linkDomainNotFound))
	g.Expect(k8sClient.Create(ctx, newDomain(ns, "go", hostname))).To(Succeed())
	g.Eventually(readyOf(link), timeout, poll).Should(Equal(linkActive))
	g.Consistently(readyOf(link), "4s", poll).Should(Equal(linkActive))
}

// readyReason is the reason of l's Ready condition ("" without one).
func readyReason(l *kurzv1alpha1.Link) string {
	for _, c := range l.Status.Conditions {
		if c.Type == "Ready" {
			return c.Reason
		}
	}
	return ""
}
