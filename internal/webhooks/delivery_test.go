package webhooks_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kurzv1alpha1 "github.com/kurz-dev/kurz/api/v1alpha1"
	"github.com/kurz-dev/kurz/internal/dns/dnstest"
	"github.com/kurz-dev/kurz/internal/testenv"
)

// TestRetryKeepsTheID: a receiver that answers 500 and then 200 gets the
// event twice, with one webhook-id (and a signature each time); the
// Webhook reads DeliveryFailing in between only if its figures were
// written then, and Subscribed after.
func TestRetryKeepsTheID(t *testing.T) {
	testenv.Need(t)
	g := NewWithT(t)
	ctx := context.Background()
	rc := newReceiver(t)
	rc.status = func(n int) int {
		if n == 1 {
			return http.StatusInternalServerError
		}
		return http.StatusOK
	}
	ns := newNamespace(t)
	startReplica(t, replicaOptions(t, dnstest.Start(t), caFile(t, rc)))
	secret := newSecret(t, ns, "signing", true)
	wh := newWebhook(t, ns, "retry", rc.url(), "signing", kurzv1alpha1.EventLinkCreated)
	g.Eventually(readyOf(wh), timeout, poll).Should(Equal("True/" + kurzv1alpha1.ReasonSubscribed))

	g.Expect(k8sClient.Create(ctx, newLink(ns, "a", "go.test", "a"))).To(Succeed())
	g.Eventually(rc.requests, timeout, poll).Should(HaveLen(2))
	got := rc.requests()
	g.Expect(got[0].id).To(Equal(got[1].id), "a retry keeps the id")
	g.Expect(got[0].body).To(Equal(got[1].body))
	for _, r := range got {
		verify(g, secret, r)
	}
	g.Eventually(func(g Gomega) {
		w := getWebhook(g, wh)
		g.Expect(w.Status.LastSuccessTime).NotTo(BeNil())
		g.Expect(w.Status.ConsecutiveFailures).To(BeZero())
		g.Expect(w.Status.LastError).To(BeEmpty())
	}, timeout, poll).Should(Succeed())
	g.Consistently(rc.requests, "1s", poll).Should(HaveLen(2), "no third attempt after the 200")
}

// TestFailuresStallNothingElse: a receiver that hangs holds its own
// Webhook's queue, nobody else's: while its first request hangs, another
// Webhook of the same namespace gets every event. The hanging Webhook's
// status then says its deliveries fail (DeliveryFailing: a timeout), once
// its timeout has passed.
func TestHangingReceiverDelaysNoOther(t *testing.T) {
	testenv.Need(t)
	g := NewWithT(t)
	ctx := context.Background()
	slow, fast := newReceiver(t), newReceiver(t)
	slow.hold = make(chan struct{})
	ns := newNamespace(t)
	startReplica(t, replicaOptions(t, dnstest.Start(t), caFile(t, slow)))
	newSecret(t, ns, "signing", true)
	hung := newWebhook(t, ns, "slow", slow.url(), "signing", kurzv1alpha1.EventLinkCreated)
	ok := newWebhook(t, ns, "fast", fast.url(), "signing", kurzv1alpha1.EventLinkCreated)
	for _, w := range []*kurzv1alpha1.Webhook{hung, ok} {
		g.Eventually(readyOf(w), timeout, poll).Should(Equal("True/" + kurzv1alpha1.ReasonSubscribed))
	}

	const n = 10
	for i := range n {
		l := newLink(ns, unique("l"), "go.test", unique("k"))
		g.Expect(k8sClient.Create(ctx, l)).To(Succeed())
		if i == 0 {
			g.Eventually(slow.requests, timeout, poll).Should(HaveLen(1), "the slow receiver holds the first event")
		}
	}
	g.Eventually(fast.requests, timeout, poll).Should(HaveLen(n), "the other receiver gets every event meanwhile")
	g.Expect(slow.requests()).To(HaveLen(1), "the slow receiver's first request still hangs")

	// Its timeout (spec.timeoutSeconds, 10 s by default) ends the attempt.
	g.Eventually(readyOf(hung), timeout, poll).Should(Equal("False/" + kurzv1alpha1.ReasonDeliveryFailing))
	g.Expect(getWebhook(g, hung).Status.LastError).To(Equal("timeout after 10s"))
	slow.release()
	g.Eventually(readyOf(hung), 3*timeout, poll).Should(Equal("True/"+kurzv1alpha1.ReasonSubscribed), "the retries succeed once it answers")
}

// TestStatusIsWrittenAtMostEvery30s: twenty deliveries in a row change the
// Webhook's status once (the figures' first write); the next write may
// come 30 s later at the earliest.
func TestStatusIsWrittenAtMostEvery30s(t *testing.T) {
	testenv.Need(t)
	g := NewWithT(t)
	ctx := context.Background()
	rc := newReceiver(t)
	ns := newNamespace(t)
	startReplica(t, replicaOptions(t, dnstest.Start(t), caFile(t, rc)))
	newSecret(t, ns, "signing", true)
	wh := newWebhook(t, ns, "quiet", rc.url(), "signing", kurzv1alpha1.EventLinkCreated)
	g.Eventually(readyOf(wh), timeout, poll).Should(Equal("True/" + kurzv1alpha1.ReasonSubscribed))

	list := &kurzv1alpha1.WebhookList{}
	g.Expect(k8sClient.List(ctx, list, client.InNamespace(ns))).To(Succeed())
	wi, err := k8sWatch(ctx, ns, list.ResourceVersion)
	g.Expect(err).NotTo(HaveOccurred())
	defer wi.Stop()

	const n = 20
	for range n {
		g.Expect(k8sClient.Create(ctx, newLink(ns, unique("l"), "go.test", unique("k")))).To(Succeed())
	}
	g.Eventually(rc.requests, timeout, poll).Should(HaveLen(n))
	// Count the Webhook's modifications until the one with the figures
	// (the first write follows the first delivery within a second); none
	// follows it (a write per delivery would, at once).
	writes, written := 0, false
	for !written {
		select {
		case e := <-wi.ResultChan():
			if e.Type == watch.Modified {
				writes++
				written = e.Object.(*kurzv1alpha1.Webhook).Status.LastSuccessTime != nil
			}
		case <-time.After(timeout):
			t.Fatalf("no figures written within %s", timeout)
		}
	}
	g.Consistently(wi.ResultChan(), "3s", poll).ShouldNot(Receive(), "no more writes: the next may come 30 s after the first")
	g.Expect(writes).To(Equal(1), "%d deliveries, one status write", n)
}

func k8sWatch(ctx context.Context, ns, rv string) (watch.Interface, error) {
	wc, err := client.NewWithWatch(cfg, client.Options{Scheme: k8sClient.Scheme()})
	if err != nil {
		return nil, err
	}
	return wc.Watch(ctx, &kurzv1alpha1.WebhookList{}, client.InNamespace(ns), &client.ListOptions{Raw: &metav1.ListOptions{ResourceVersion: rv}})
}

// TestLinkSelector: a Webhook with a linkSelector gets the events of the
// Links it selects (by label, and by any of its tags) and no others.
func TestLinkSelector(t *testing.T) {
	testenv.Need(t)
	g := NewWithT(t)
	ctx := context.Background()
	rc := newReceiver(t)
	ns := newNamespace(t)
	startReplica(t, replicaOptions(t, dnstest.Start(t), caFile(t, rc)))
	newSecret(t, ns, "signing", true)
	wh := newWebhook(t, ns, "selective", rc.url(), "signing", kurzv1alpha1.EventLinkCreated)
	g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(wh), wh)).To(Succeed())
	wh.Spec.LinkSelector = &kurzv1alpha1.WebhookLinkSelector{
		LabelSelector: metav1.LabelSelector{MatchLabels: map[string]string{"team": "growth"}},
		Tags:          []string{"promo", "launch"},
	}
	g.Expect(k8sClient.Update(ctx, wh)).To(Succeed())
	g.Eventually(readyOf(wh), timeout, poll).Should(Equal("True/" + kurzv1alpha1.ReasonSubscribed))

	make := func(name string, labels map[string]string, tags ...string) *kurzv1alpha1.Link {
		l := newLink(ns, name, "go.test", name)
		l.Labels, l.Spec.Tags = labels, tags
		g.Expect(k8sClient.Create(ctx, l)).To(Succeed())
		linkObserved(g, l)
		return l
	}
	make("no-label", nil, "promo")
	make("no-tag", map[string]string{"team": "growth"})
	make("other-tag", map[string]string{"team": "growth"}, "misc")
	want := make("selected", map[string]string{"team": "growth"}, "misc", "launch")
	g.Eventually(rc.requests, timeout, poll).Should(HaveLen(1))
	g.Consistently(rc.requests, "1s", poll).Should(HaveLen(1))
	g.Expect(string(rc.requests()[0].body)).To(ContainSubstring(string(want.UID)))
}
