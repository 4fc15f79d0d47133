package webhooks_test

import (
	"context"
	"encoding/base64"
	"encoding/hex"
	"net/http"
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	eventsv1 "k8s.io/api/events/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	kurzv1alpha1 "github.com/kurz-dev/kurz/api/v1alpha1"
	"github.com/kurz-dev/kurz/internal/dns/dnstest"
	"github.com/kurz-dev/kurz/internal/testenv"
)

// TestSecretNeverLeaks drives Webhooks through failing deliveries, an
// invalid Secret and a missing one, then greps every Webhook's status, the
// namespace's events and every log line of the suite (up to V(7), see the
// suite's logger) for the secrets (the whsec_ value, its key in base64 and
// hex, a wrong value) and for a token in a receiver's URL: none may
// appear.
func TestSecretNeverLeaks(t *testing.T) {
	testenv.Need(t)
	g := NewWithT(t)
	ctx := context.Background()
	rc := newReceiver(t)
	rc.status = func(n int) int {
		if n <= 2 {
			return http.StatusServiceUnavailable
		}
		return http.StatusOK
	}
	ns := newNamespace(t)
	startReplica(t, replicaOptions(t, dnstest.Start(t), caFile(t, rc)))

	secret := newSecret(t, ns, "signing", true)
	const token = "tok3n-in-the-url-0123456789"
	good := newWebhook(t, ns, "good", rc.url()+"?token="+token, "signing", kurzv1alpha1.EventLinkCreated)
	const wrong = "hunter2-is-not-a-signing-secret"
	createSecret(t, ns, "wrong", true, wrong)
	invalid := newWebhook(t, ns, "invalid", rc.url(), "wrong", kurzv1alpha1.EventLinkCreated)
	createSecret(t, ns, "unlabelled", false, secret)
	missing := newWebhook(t, ns, "missing", rc.url(), "unlabelled", kurzv1alpha1.EventLinkCreated)

	g.Eventually(readyOf(invalid), timeout, poll).Should(Equal("False/" + kurzv1alpha1.ReasonSecretInvalid))
	g.Eventually(readyOf(missing), timeout, poll).Should(Equal("False/" + kurzv1alpha1.ReasonSecretNotFound))
	g.Eventually(readyOf(good), timeout, poll).Should(Equal("True/" + kurzv1alpha1.ReasonSubscribed))
	g.Expect(k8sClient.Create(ctx, newLink(ns, "a", "go.test", "a"))).To(Succeed())
	g.Eventually(rc.requests, timeout, poll).Should(HaveLen(3), "two 503s, then the 200; the Webhooks without a valid Secret send nothing")
	for _, r := range rc.requests() {
		verify(g, secret, r)
	}
	g.Eventually(func(g Gomega) { g.Expect(getWebhook(g, good).Status.LastDeliveryTime).NotTo(BeNil()) }, timeout, poll).Should(Succeed())

	key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, "whsec_"))
	g.Expect(err).NotTo(HaveOccurred())
	needles := []string{secret, strings.TrimPrefix(secret, "whsec_"), hex.EncodeToString(key), wrong, token}

	var hooks kurzv1alpha1.WebhookList
	g.Expect(k8sClient.List(ctx, &hooks, client.InNamespace(ns))).To(Succeed())
	var haystacks []string
	for _, w := range hooks.Items {
		b, err := yaml.Marshal(w.Status)
		g.Expect(err).NotTo(HaveOccurred())
		haystacks = append(haystacks, "status of "+w.Name+": "+string(b))
	}
	var evs eventsv1.EventList
	g.Eventually(func(g Gomega) {
		g.Expect(k8sClient.List(ctx, &evs, client.InNamespace(ns))).To(Succeed())
		g.Expect(len(evs.Items)).To(BeNumerically(">=", 2), "the Stalled Webhooks' events")
	}, timeout, poll).Should(Succeed())
	for _, e := range evs.Items {
		haystacks = append(haystacks, "event "+e.Reason+": "+e.Note)
	}
	for _, line := range strings.Split(logs.String(), "\n") {
		haystacks = append(haystacks, "log: "+line)
	}
	for _, h := range haystacks {
		for _, n := range needles {
			if strings.Contains(h, n) {
				t.Errorf("%q appears in %.500s", n, h)
			}
		}
	}
	// The searches looked at something real.
	g.Expect(logs.String()).To(ContainSubstring(good.Name))
	g.Expect(strings.Join(haystacks, "\n")).To(ContainSubstring("Secret wrong, key secret"))
}
