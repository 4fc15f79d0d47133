package webhooks_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	mdns "github.com/miekg/dns"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kurzv1alpha1 "github.com/kurz-dev/kurz/api/v1alpha1"
	"github.com/kurz-dev/kurz/internal/claims"
	"github.com/kurz-dev/kurz/internal/dns/dnstest"
	"github.com/kurz-dev/kurz/internal/routing"
	"github.com/kurz-dev/kurz/internal/testenv"
	"github.com/kurz-dev/kurz/internal/webhooks"
)

// TestEveryEventType makes every change event happen for real (a Domain
// proven by its TXT record and then not, its certificate, Links created,
// edited, clicked in status, in conflict, expired and deleted) and checks
// that an HTTPS receiver gets each, signed, with the API's object as data
// and the deterministic id.
func TestEveryEventType(t *testing.T) {
	testenv.Need(t)
	g := NewWithT(t)
	ctx := context.Background()
	dns := dnstest.Start(t)
	rc := newReceiver(t)
	ns, ingressNS := newNamespace(t), newNamespace(t)
	o := replicaOptions(t, dns, caFile(t, rc))
	o.Controllers.Ingress.Class = "nginx"
	o.Controllers.Routes.Namespace = ingressNS
	startReplica(t, o)

	secret := newSecret(t, ns, "signing", true)
	var all []kurzv1alpha1.WebhookEvent
	for _, e := range kurzv1alpha1.WebhookEvents {
		if e != kurzv1alpha1.EventLinkClicked {
			all = append(all, e)
		}
	}
	wh := newWebhook(t, ns, "all", rc.url(), "signing", all...)
	g.Eventually(readyOf(wh), timeout, poll).Should(Equal("True/" + kurzv1alpha1.ReasonSubscribed))

	nsObj := &corev1.Namespace{}
	g.Expect(k8sClient.Get(ctx, types.NamespacedName{Name: ns}, nsObj)).To(Succeed())
	host := unique("go") + ".test"
	txt := kurzv1alpha1.ChallengeRecordPrefix + host
	dns.Set(txt, mdns.TypeTXT, claims.ChallengeValue(nsObj.UID, host))

	// one waits for exactly one event of type t and returns it, verified.
	one := func(t kurzv1alpha1.WebhookEvent) (received, map[string]any) {
		var r received
		g.Eventually(func(g Gomega) []received { return rc.ofType(g, t) }, timeout, poll).Should(HaveLen(1), "one %s", t)
		r = rc.ofType(g, t)[0]
		verify(g, secret, r)
		p := r.payload(g)
		g.Expect(p.Version).To(Equal("v1"))
		_, err := time.Parse("2006-01-02T15:04:05.000000Z", p.Timestamp)
		g.Expect(err).NotTo(HaveOccurred())
		var data map[string]any
		g.Expect(json.Unmarshal(p.Data, &data)).To(Succeed())
		g.Expect(data).To(HaveKeyWithValue("workspace_id", string(nsObj.UID)))
		return r, data
	}

	d := &kurzv1alpha1.Domain{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "go"}, Spec: kurzv1alpha1.DomainSpec{Domain: kurzv1alpha1.Hostname(host)}}
	g.Expect(k8sClient.Create(ctx, d)).To(Succeed())
	_, data := one(kurzv1alpha1.EventDomainVerified)
	g.Expect(data).To(HaveKeyWithValue("domain", host))
	g.Expect(data).To(HaveKeyWithValue("status", "active"))

	cert, key := testenv.SelfSignedCert(t, host, time.Now().Add(-time.Hour), time.Now().Add(90*24*time.Hour))
	g.Expect(k8sClient.Create(ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: ingressNS, Name: routing.SecretName(host)},
		Type:       corev1.SecretTypeTLS,
		Data:       map[string][]byte{corev1.TLSCertKey: cert, corev1.TLSPrivateKeyKey: key},
	})).To(Succeed())
	_, data = one(kurzv1alpha1.EventDomainTLSReady)
	g.Expect(data).To(HaveKeyWithValue("domain", host))

	a := newLink(ns, "a", host, "a")
	a.Labels = map[string]string{"team": "growth"}
	g.Expect(k8sClient.Create(ctx, a)).To(Succeed())
	r, data := one(kurzv1alpha1.EventLinkCreated)
	g.Expect(r.id).To(Equal(webhooks.EventID(kurzv1alpha1.EventLinkCreated, a.UID, "")))
	g.Expect(data).To(HaveKeyWithValue("id", string(a.UID)))
	g.Expect(data).To(HaveKeyWithValue("link", "https://"+host+"/a"))

	// A status write (a click flush) is no update; a spec edit is.
	g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(a), a)).To(Succeed())
	patch := client.MergeFrom(a.DeepCopy())
	a.Status.Clicks = 5
	g.Expect(k8sClient.Status().Patch(ctx, a, patch)).To(Succeed())
	g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(a), a)).To(Succeed())
	a.Spec.URL = "https://example.com/edited"
	g.Expect(k8sClient.Update(ctx, a)).To(Succeed())
	r, data = one(kurzv1alpha1.EventLinkUpdated)
	g.Expect(r.id).To(Equal(webhooks.EventID(kurzv1alpha1.EventLinkUpdated, a.UID, webhooks.Generation(2))))
	g.Expect(data).To(HaveKeyWithValue("url", "https://example.com/edited"))
	g.Expect(data).To(HaveKeyWithValue("clicks", BeNumerically("==", 5)))

	b := newLink(ns, "b", host, "a") // a's key: b is younger, so b conflicts
	g.Expect(k8sClient.Create(ctx, b)).To(Succeed())
	_, data = one(kurzv1alpha1.EventLinkConflict)
	g.Expect(data).To(HaveKeyWithValue("id", string(b.UID)))

	c := newLink(ns, "c", host, "c")
	expires := metav1.NewTime(time.Now().Add(3 * time.Second).Truncate(time.Second))
	c.Spec.ExpiresAt = &expires
	g.Expect(k8sClient.Create(ctx, c)).To(Succeed())
	r, data = one(kurzv1alpha1.EventLinkExpired)
	g.Expect(data).To(HaveKeyWithValue("id", string(c.UID)))
	g.Expect(r.payload(g).Timestamp).To(Equal(expires.UTC().Format("2006-01-02T15:04:05.000000Z")))

	g.Expect(k8sClient.Delete(ctx, a)).To(Succeed())
	r, data = one(kurzv1alpha1.EventLinkDeleted)
	g.Expect(r.id).To(Equal(webhooks.EventID(kurzv1alpha1.EventLinkDeleted, a.UID, "")))
	g.Expect(data).To(HaveKeyWithValue("key", "a"))

	// The TXT record goes away: two absent checks later the Domain is
	// Pending again.
	dns.Set(txt, mdns.TypeTXT)
	_, data = one(kurzv1alpha1.EventDomainUnverified)
	g.Expect(data).To(HaveKeyWithValue("status", "pending"))

	// Every link event: created three times (a, b, c), updated once.
	g.Expect(rc.ofType(g, kurzv1alpha1.EventLinkCreated)).To(HaveLen(3))
	g.Expect(rc.ofType(g, kurzv1alpha1.EventLinkUpdated)).To(HaveLen(1), "the status write sent no link.updated")
	for _, r := range rc.requests() {
		verify(g, secret, r)
	}
}
