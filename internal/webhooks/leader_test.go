package webhooks_test

import (
	"context"
	"fmt"
	"testing"

	. "github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kurzv1alpha1 "github.com/kurz-dev/kurz/api/v1alpha1"
	"github.com/kurz-dev/kurz/internal/dns/dnstest"
	"github.com/kurz-dev/kurz/internal/testenv"
	"github.com/kurz-dev/kurz/internal/webhooks"
)

// TestLeaderChange measures what webhook receivers lose when the leader
// goes away (docs/webhooks.md, "Leader changes" quotes its log lines):
//
//  1. The leader A queued events its receiver had not taken (the receiver
//     hangs): ten link.created and three link.deleted. A stops; the
//     standby B, whose informer saw the same Links and deletes, leads and
//     resends the changes of the last five minutes.
//  2. No replica runs while two Links are created, one edited and one
//     deleted; a fresh replica C then leads.
//
// Each event is counted once per id, as a receiver deduplicating by
// webhook-id would.
func TestLeaderChange(t *testing.T) {
	testenv.Need(t)
	g := NewWithT(t)
	ctx := context.Background()
	dns := dnstest.Start(t)
	rc := newReceiver(t)
	ns := newNamespace(t)
	o := replicaOptions(t, dns, caFile(t, rc))
	newSecret(t, ns, "signing", true)
	wh := newWebhook(t, ns, "changes", rc.url(), "signing",
		kurzv1alpha1.EventLinkCreated, kurzv1alpha1.EventLinkUpdated, kurzv1alpha1.EventLinkDeleted)
	a := startReplica(t, o)
	g.Eventually(readyOf(wh), timeout, poll).Should(Equal("True/" + kurzv1alpha1.ReasonSubscribed))

	want := map[string]string{} // id -> what
	expect := func(t kurzv1alpha1.WebhookEvent, l *kurzv1alpha1.Link, discriminator string) {
		want[webhooks.EventID(t, l.UID, discriminator)] = string(t) + " " + l.Name
	}
	x := newLink(ns, "x", "go.test", "x")
	g.Expect(k8sClient.Create(ctx, x)).To(Succeed())
	expect(kurzv1alpha1.EventLinkCreated, x, "")
	g.Eventually(rc.requests, timeout, poll).Should(HaveLen(1))

	// 1. A queues what its receiver does not take, and stops.
	rc.mu.Lock()
	rc.hold = make(chan struct{})
	rc.mu.Unlock()
	b := startReplica(t, o) // the standby
	var queued []*kurzv1alpha1.Link
	for i := range 10 {
		l := newLink(ns, fmt.Sprintf("q%d", i), "go.test", fmt.Sprintf("q%d", i))
		g.Expect(k8sClient.Create(ctx, l)).To(Succeed())
		queued = append(queued, l)
		expect(kurzv1alpha1.EventLinkCreated, l, "")
	}
	for _, l := range queued {
		linkObserved(g, l) // A reconciled it: its link.created is in A's queue
		// B's informer holds it too, so B sees its delete below (on a
		// loaded machine B's first list can come after the deletes).
		g.Eventually(func() error {
			return b.m.GetCache().Get(ctx, client.ObjectKeyFromObject(l), &kurzv1alpha1.Link{})
		}, timeout, poll).Should(Succeed())
	}
	for _, l := range queued[:3] {
		g.Expect(k8sClient.Delete(ctx, l)).To(Succeed())
		expect(kurzv1alpha1.EventLinkDeleted, l, "")
	}
	for _, l := range queued[:3] {
		g.Eventually(func() bool {
			return apierrors.IsNotFound(k8sClient.Get(ctx, client.ObjectKeyFromObject(l), &kurzv1alpha1.Link{}))
		}, timeout, poll).Should(BeTrue())
		g.Eventually(func() bool { // and B's informer saw the delete
			return apierrors.IsNotFound(b.m.GetCache().Get(ctx, client.ObjectKeyFromObject(l), &kurzv1alpha1.Link{}))
		}, timeout, poll).Should(BeTrue())
	}
	beforeStop := len(rc.requests())
	a.halt()
	rc.release()
	g.Eventually(func() map[string]string { return missing(rc, want) }, timeout, poll).Should(BeEmpty(), "B resends what A had queued")
	t.Logf("leader stopped with 10 link.created and 3 link.deleted queued (its receiver had taken %d of them): the new leader resent them, %d lost; %d requests in all for %d events",
		beforeStop-1, len(missing(rc, want)), len(rc.requests()), len(want))

	// 2. No replica runs while Links change.
	b.halt()
	var y []*kurzv1alpha1.Link
	for i := range 2 {
		l := newLink(ns, fmt.Sprintf("y%d", i), "go.test", fmt.Sprintf("y%d", i))
		g.Expect(k8sClient.Create(ctx, l)).To(Succeed())
		y = append(y, l)
		expect(kurzv1alpha1.EventLinkCreated, l, "")
	}
	edited := queued[3]
	g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(edited), edited)).To(Succeed())
	edited.Spec.URL = "https://example.com/edited"
	g.Expect(k8sClient.Update(ctx, edited)).To(Succeed())
	expect(kurzv1alpha1.EventLinkUpdated, edited, webhooks.Generation(edited.Generation))
	gone := queued[4]
	g.Expect(k8sClient.Delete(ctx, gone)).To(Succeed())
	deleteID := webhooks.EventID(kurzv1alpha1.EventLinkDeleted, gone.UID, "")

	startReplica(t, o)
	for _, l := range y {
		linkObserved(g, l)
	}
	g.Eventually(func() map[string]string { return missing(rc, want) }, timeout, poll).Should(BeEmpty(), "C sends the creates and the edit it reconciles")
	g.Consistently(func() bool { return receivedIDs(rc)[deleteID] }, "2s", poll).Should(BeFalse(), "the delete while no replica ran is lost")
	t.Logf("while no replica ran: 2 creates and 1 edit sent by the next leader, 1 delete lost; %d requests in all for %d distinct events",
		len(rc.requests()), len(receivedIDs(rc)))
}

// receivedIDs returns the ids the receiver got.
func receivedIDs(rc *receiver) map[string]bool {
	got := map[string]bool{}
	for _, r := range rc.requests() {
		got[r.id] = true
	}
	return got
}

// missing returns the wanted events the receiver has not got.
func missing(rc *receiver, want map[string]string) map[string]string {
	got := receivedIDs(rc)
	out := map[string]string{}
	for id, what := range want {
		if !got[id] {
			out[id] = what
		}
	}
	return out
}
