package controllers_test

import (
	"testing"
	"time"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	kurzv1alpha1 "github.com/kurz-dev/kurz/api/v1alpha1"
	"github.com/kurz-dev/kurz/controllers"
	"github.com/kurz-dev/kurz/internal/fieldindex"
	"github.com/kurz-dev/kurz/internal/testenv"
)

// TestStartQueuesOnlyWhatChanged: a leader's start does not queue the
// Links whose status is already what a reconcile would write; it queues
// those that changes made while no leader ran (a Domain deleted, the
// older holder of a key deleted) leave wrong, and those with an expiry,
// and a restarted manager then corrects exactly those.
func TestStartQueuesOnlyWhatChanged(t *testing.T) {
	testenv.Need(t)
	g := NewWithT(t)
	srv := newDNS(t)
	stop := start(t, newManager(t, cfg, testOptions(srv), nil))
	ns := newNamespace(t, "start")
	stays, goes := host(t, "stays.start.test"), host(t, "goes.start.test")
	createDomain(g, ns, "stays", stays, pending)
	gone := createDomain(g, ns, "goes", goes, pending)

	var plain []*kurzv1alpha1.Link
	for _, k := range []string{"a", "b", "c", "d", "e", "f", "g", "h"} {
		l := newLink(ns, "plain-"+k, stays, k)
		createReady(g, l, linkActive)
		plain = append(plain, l)
	}
	orphan := newLink(ns, "orphan", goes, "o")
	createReady(g, orphan, linkActive)
	older := newLink(ns, "older", stays, "k")
	createReady(g, older, linkActive)
	younger := newLink(ns, "younger", stays, "k")
	createReady(g, younger, linkKeyConflict)
	expiring := newLink(ns, "expiring", stays, "x")
	expiring.Spec.ExpiresAt = &metav1.Time{Time: time.Now().Add(time.Hour)}
	createReady(g, expiring, linkActive)

	// No leader runs while a Domain and the older holder of a key go.
	stop()
	g.Expect(k8sClient.Delete(ctx, gone)).To(Succeed())
	g.Expect(k8sClient.Delete(ctx, older)).To(Succeed())

	// The first list passes only Links whose status is not this
	// generation's.
	g.Expect(controllers.SettledAtStart.Create(event.CreateEvent{Object: plain[0], IsInInitialList: true})).To(BeFalse())
	g.Expect(controllers.SettledAtStart.Create(event.CreateEvent{Object: plain[0]})).To(BeTrue(), "a Link created after the start")
	fresh := plain[0].DeepCopy()
	fresh.Generation++
	g.Expect(controllers.SettledAtStart.Create(event.CreateEvent{Object: fresh, IsInInitialList: true})).To(BeTrue(), "a spec changed while no leader ran")

	// The start check on a synced cache of this cluster queues what
	// changed and what expires, nothing else of this namespace.
	mgr, err := newBareManager()
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(fieldindex.Setup(ctx, mgr.GetFieldIndexer())).To(Succeed())
	links, err := fieldindex.NewLinks(ctx, mgr.GetCache())
	g.Expect(err).NotTo(HaveOccurred())
	start(t, mgr)
	g.Expect(mgr.GetCache().WaitForCacheSync(ctx)).To(BeTrue())
	r := &controllers.LinkReconciler{Client: mgr.GetClient(), Links: links, Now: time.Now}
	q := workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[reconcile.Request]())
	defer q.ShutDown()
	r.CheckSettled(ctx, q)
	var queued []string
	for q.Len() > 0 {
		req, _ := q.Get()
		if req.Namespace == ns {
			queued = append(queued, req.Name)
		}
		q.Done(req)
	}
	g.Expect(queued).To(ConsistOf("orphan", "younger", "expiring"))

	// A new leader corrects them.
	start(t, newManager(t, cfg, testOptions(srv), nil))
	g.Eventually(readyOf(orphan), timeout, poll).Should(Equal(linkDomainNotFound))
	g.Eventually(readyOf(younger), timeout, poll).Should(Equal(linkActive))
	for _, l := range plain {
		g.Expect(readyOf(l)(g)).To(Equal(linkActive))
	}
}
