package controllers_test

import (
	"testing"
	"time"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kurzv1alpha1 "github.com/kurz-dev/kurz/api/v1alpha1"
	"github.com/kurz-dev/kurz/internal/testenv"
)

func TestLinkDomainNotFound(t *testing.T) {
	testenv.Need(t)
	g := NewWithT(t)
	srv := startControllers(t)
	ns, other := newNamespace(t, "nf"), newNamespace(t, "nf")

	l := newLink(ns, "l", host(t, "go.nf.test"), "k")
	createReady(g, l, linkDomainNotFound)
	g.Expect(l.Status.ShortURL).To(Equal("https://" + host(t, "go.nf.test") + "/k"))

	// A Domain of another namespace does not count.
	g.Expect(k8sClient.Create(ctx, newDomain(other, "go", host(t, "go.nf.test")))).To(Succeed())
	g.Consistently(readyOf(l), "1s", poll).Should(Equal(linkDomainNotFound))

	// Neither does a Domain of this namespace whose hostname another
	// namespace holds; its claim is contested, so once that one goes the
	// link serves only when the Domain's TXT record proves it.
	d := newDomain(ns, "go", host(t, "go.nf.test"))
	g.Expect(k8sClient.Create(ctx, d)).To(Succeed())
	g.Consistently(readyOf(l), "1s", poll).Should(Equal(linkDomainNotFound))
	g.Expect(k8sClient.Delete(ctx, newDomain(other, "go", host(t, "go.nf.test")))).To(Succeed())
	g.Consistently(readyOf(l), "1s", poll).Should(Equal(linkDomainNotFound))
	g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(d), d)).To(Succeed())
	srv.Set(d.Status.Record.Name, dnsTypeTXT, d.Status.Record.Value)
	g.Eventually(readyOf(l), timeout, poll).Should(Equal(linkActive))
	srv.Set(d.Status.Record.Name, dnsTypeTXT)

	// The Domain goes: the link stops serving and nothing else changes;
	// it comes back with the Domain.
	g.Expect(k8sClient.Delete(ctx, d)).To(Succeed())
	g.Eventually(readyOf(l), timeout, poll).Should(Equal(linkDomainNotFound))
	g.Expect(k8sClient.Create(ctx, newDomain(ns, "go2", host(t, "go.nf.test")))).To(Succeed())
	g.Eventually(readyOf(l), timeout, poll).Should(Equal(linkActive))

	// Moving the link to a hostname without a Domain.
	update(g, l, func() { l.Spec.Domain = kurzv1alpha1.Hostname(host(t, "nowhere.nf.test")) })
	g.Eventually(readyOf(l), timeout, poll).Should(Equal(linkDomainNotFound))
	g.Expect(l.Status.ShortURL).To(Equal("https://" + host(t, "nowhere.nf.test") + "/k"))

	g.Eventually(eventReasons(l), timeout, poll).Should(ContainElements(
		kurzv1alpha1.ReasonDomainNotFound, kurzv1alpha1.ReasonActive))
}

func TestLinkKeyConflict(t *testing.T) {
	testenv.Need(t)
	g := NewWithT(t)
	startControllers(t)
	ns, other := newNamespace(t, "kc"), newNamespace(t, "kc")
	g.Expect(k8sClient.Create(ctx, newDomain(ns, "go", host(t, "go.kc.test")))).To(Succeed())

	first := newLink(ns, "b-first", host(t, "go.kc.test"), "k")
	createReady(g, first, linkActive)

	// Created in a later second: it loses although its name sorts first
	// (creationTimestamp decides before names do).
	g.Eventually(func() bool { return time.Now().Truncate(time.Second).After(first.CreationTimestamp.Time) }, timeout, poll).Should(BeTrue())
	second := newLink(ns, "a-second", host(t, "go.kc.test"), "k")
	createReady(g, second, linkKeyConflict)
	g.Expect(second.Status.Conditions[0].Message).To(ContainSubstring("b-first"))
	g.Consistently(readyOf(first), "1s", poll).Should(Equal(linkActive))

	// The same key in another namespace is no conflict (that namespace
	// cannot hold the hostname, so it reports DomainNotFound instead).
	elsewhere := newLink(other, "c", host(t, "go.kc.test"), "k")
	createReady(g, elsewhere, linkDomainNotFound)

	// The winner moves to another key: the loser takes over.
	update(g, first, func() { first.Spec.Key = "k2" })
	g.Eventually(readyOf(second), timeout, poll).Should(Equal(linkActive))
	g.Expect(readyOf(first)(g)).To(Equal(linkActive))

	// It moves back: as the older link it wins again.
	update(g, first, func() { first.Spec.Key = "k" })
	g.Eventually(readyOf(second), timeout, poll).Should(Equal(linkKeyConflict))
	g.Expect(readyOf(first)(g)).To(Equal(linkActive))

	// The winner is deleted: the loser recovers.
	g.Expect(k8sClient.Delete(ctx, first)).To(Succeed())
	g.Eventually(readyOf(second), timeout, poll).Should(Equal(linkActive))
	g.Eventually(eventReasons(second), timeout, poll).Should(ContainElements(
		kurzv1alpha1.ReasonKeyConflict, kurzv1alpha1.ReasonActive))
}

// TestLinkKeyConflictAtStart: Links that were there before the controllers
// started are decided from the first reconciles alone (the watches that map
// a Link to its key peers skip the informer's initial list).
func TestLinkKeyConflictAtStart(t *testing.T) {
	testenv.Need(t)
	g := NewWithT(t)
	ns := newNamespace(t, "kcs")
	hostname := host(t, "go.kcs.test")
	g.Expect(k8sClient.Create(ctx, newDomain(ns, "go", hostname))).To(Succeed())
	first := newLink(ns, "b-first", hostname, "k")
	g.Expect(k8sClient.Create(ctx, first)).To(Succeed())
	g.Eventually(func() bool { return time.Now().Truncate(time.Second).After(first.CreationTimestamp.Time) }, timeout, poll).Should(BeTrue())
	second := newLink(ns, "a-second", hostname, "k")
	g.Expect(k8sClient.Create(ctx, second)).To(Succeed())

	startControllers(t)
	g.Eventually(readyOf(first), timeout, poll).Should(Equal(linkActive))
	g.Eventually(readyOf(second), timeout, poll).Should(Equal(linkKeyConflict))
	g.Consistently(readyOf(second), "1s", poll).Should(Equal(linkKeyConflict))
	g.Expect(readyOf(first)(g)).To(Equal(linkActive))
}

func TestLinkExpiry(t *testing.T) {
	testenv.Need(t)
	g := NewWithT(t)
	ns, h := startWithDomain(t, "exp")

	// expiresAt has one-second resolution in the API.
	expiresAt := metav1.NewTime(time.Now().Add(4 * time.Second).Truncate(time.Second))
	l := newLink(ns, "l", h, "k")
	l.Spec.ExpiresAt = &expiresAt
	createReady(g, l, linkActive)

	// It flips by itself, within a second of expiresAt.
	g.Eventually(readyOf(l), time.Until(expiresAt.Time)+time.Second, poll).Should(Equal(linkExpired))
	g.Expect(time.Now()).To(BeTemporally(">=", expiresAt.Time))
	g.Expect(l.Status.Conditions[0].Message).To(ContainSubstring(expiresAt.UTC().Format(time.RFC3339)))

	// A later expiresAt revives it, and it expires again on time.
	later := metav1.NewTime(time.Now().Add(3 * time.Second).Truncate(time.Second))
	l.Spec.ExpiresAt = &later
	g.Expect(k8sClient.Update(ctx, l)).To(Succeed())
	g.Eventually(readyOf(l), timeout, poll).Should(Equal(linkActive))
	g.Eventually(readyOf(l), time.Until(later.Time)+time.Second, poll).Should(Equal(linkExpired))

	// Without expiresAt it serves for good.
	l.Spec.ExpiresAt = nil
	g.Expect(k8sClient.Update(ctx, l)).To(Succeed())
	g.Eventually(readyOf(l), timeout, poll).Should(Equal(linkActive))
	g.Eventually(eventReasons(l), timeout, poll).Should(ContainElements(
		kurzv1alpha1.ReasonExpired, kurzv1alpha1.ReasonActive))
}

func TestLinkStatusFields(t *testing.T) {
	testenv.Need(t)
	g := NewWithT(t)
	ns, h := startWithDomain(t, "st")

	l := newLink(ns, "l", h, "k")
	createReady(g, l, linkActive)
	g.Expect(l.Status.ShortURL).To(Equal("https://" + h + "/k"))
	g.Expect(l.Status.ObservedGeneration).To(Equal(l.Generation))
	g.Expect(l.Status.CreatedAt).NotTo(BeNil())
	g.Expect(l.Status.UpdatedAt).To(Equal(l.Status.CreatedAt))
	g.Expect(l.Status.UpdatedGeneration).To(Equal(l.Generation))
	created := *l.Status.CreatedAt

	// The redirect server flushes clicks: status only, so no reconcile,
	// and later passes never clobber them.
	clicked := l.DeepCopy()
	clicked.Status.Clicks = 5
	g.Expect(k8sClient.Status().Patch(ctx, clicked, client.MergeFrom(l))).To(Succeed())

	// A kubectl edit of the spec: the controller stamps updatedAt.
	update(g, l, func() { l.Spec.URL = "https://example.com/changed" })
	gen := l.Generation
	g.Eventually(func(g Gomega) int64 {
		g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(l), l)).To(Succeed())
		return l.Status.ObservedGeneration
	}, timeout, poll).Should(Equal(gen))
	g.Expect(l.Status.UpdatedGeneration).To(Equal(gen))
	g.Expect(l.Status.UpdatedAt.Time).To(BeTemporally(">", created.Time))
	g.Expect(l.Status.CreatedAt.Time).To(BeTemporally("==", created.Time))
	g.Expect(l.Status.Clicks).To(Equal(int64(5)))
	// Stamps keep microseconds.
	g.Expect(l.Status.UpdatedAt.Time).To(Equal(l.Status.UpdatedAt.Truncate(time.Microsecond)))

	// Labels and annotations are the user's: never touched, and changing
	// them bumps no generation and causes no status write.
	l.Labels = map[string]string{"team": "growth"}
	g.Expect(k8sClient.Update(ctx, l)).To(Succeed())
	rv := l.ResourceVersion
	g.Consistently(func(g Gomega) string {
		g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(l), l)).To(Succeed())
		return l.ResourceVersion
	}, "1s", poll).Should(Equal(rv))
	g.Expect(l.Labels).To(Equal(map[string]string{"team": "growth"}))
}
