package webhooks_test

import (
	"context"
	"net/url"
	"testing"

	mdns "github.com/miekg/dns"
	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/api/meta"

	kurzv1alpha1 "github.com/kurz-dev/kurz/api/v1alpha1"
	"github.com/kurz-dev/kurz/internal/dns/dnstest"
	"github.com/kurz-dev/kurz/internal/testenv"
)

// TestRefusedTargets: with loopback not allowed (kurz manager's default),
// a Webhook to 127.0.0.1, to the metadata address, or to a name resolving
// to either is Stalled (URLRefused) with a message that says why, and its
// receiver gets nothing; so are Services without
// --webhook-allow-cluster-services and Services of another namespace.
func TestRefusedTargets(t *testing.T) {
	testenv.Need(t)
	g := NewWithT(t)
	ctx := context.Background()
	rc := newReceiver(t)
	port := mustURL(t, rc.url()).Port()
	dns := dnstest.Start(t)
	dns.Set("loop.test", mdns.TypeA, "127.0.0.1")
	dns.Set("meta.test", mdns.TypeA, "169.254.169.254")
	dns.Set("private.test", mdns.TypeA, "10.1.2.3")
	ns := newNamespace(t)
	o := replicaOptions(t, dns, caFile(t, rc))
	o.Webhooks.AllowLoopback = false
	o.Webhooks.DNSServer = dns.Addr
	startReplica(t, o)
	newSecret(t, ns, "signing", true)

	for _, tc := range []struct{ name, url, says string }{
		{"loopback", rc.url(), "127.0.0.1 is a loopback address"},
		{"metadata", "https://169.254.169.254/latest/meta-data", "169.254.169.254 is a metadata service address"},
		{"loop-name", "https://loop.test:" + port + "/hook", "loop.test resolves to 127.0.0.1 (loopback)"},
		{"meta-name", "https://meta.test/hook", "meta.test resolves to 169.254.169.254 (metadata service)"},
		{"private-name", "https://private.test/hook", "private.test resolves to 10.1.2.3 (private)"},
		{"ipv6-loopback", "https://[::1]:" + port + "/hook", "::1 is a loopback address"},
		{"service", "http://receiver." + ns + ".svc/hook", "--webhook-allow-cluster-services"},
		{"other-namespace", "http://receiver.kube-system.svc.cluster.local/hook", "a Service of another namespace"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			wh := newWebhook(t, ns, tc.name, tc.url, "signing", kurzv1alpha1.EventLinkCreated)
			g.Eventually(readyOf(wh), timeout, poll).Should(Equal("False/" + kurzv1alpha1.ReasonURLRefused))
			w := getWebhook(g, wh)
			g.Expect(meta.IsStatusConditionTrue(w.Status.Conditions, kurzv1alpha1.ConditionStalled)).To(BeTrue())
			g.Expect(meta.FindStatusCondition(w.Status.Conditions, kurzv1alpha1.ConditionReady).Message).To(ContainSubstring(tc.says))
		})
	}
	l := newLink(ns, "a", "go.test", "a")
	g.Expect(k8sClient.Create(ctx, l)).To(Succeed())
	linkObserved(g, l)
	g.Consistently(rc.requests, "2s", poll).Should(BeEmpty(), "no refused Webhook reached the receiver")
}

// TestRebindingIsRefusedAtConnect: a name that resolves to a public
// address when the Webhook is checked and to 127.0.0.1 when kurz connects
// (DNS rebinding) is refused by the dialer, which checks the address it
// connects to; the receiver gets nothing and the Webhook turns Stalled.
func TestRebindingIsRefusedAtConnect(t *testing.T) {
	testenv.Need(t)
	g := NewWithT(t)
	ctx := context.Background()
	rc := newReceiver(t)
	dns := dnstest.Start(t)
	dns.Set("rebind.test", mdns.TypeA, "192.0.2.10") // documentation range: public to kurz
	ns := newNamespace(t)
	o := replicaOptions(t, dns, caFile(t, rc))
	o.Webhooks.AllowLoopback = false
	o.Webhooks.DNSServer = dns.Addr
	startReplica(t, o)
	newSecret(t, ns, "signing", true)
	wh := newWebhook(t, ns, "rebind", "https://rebind.test:"+mustURL(t, rc.url()).Port()+"/hook", "signing", kurzv1alpha1.EventLinkCreated)
	g.Eventually(readyOf(wh), timeout, poll).Should(Equal("True/" + kurzv1alpha1.ReasonSubscribed))

	dns.Set("rebind.test", mdns.TypeA, "127.0.0.1")
	g.Expect(k8sClient.Create(ctx, newLink(ns, "a", "go.test", "a"))).To(Succeed())
	g.Eventually(readyOf(wh), timeout, poll).Should(Equal("False/" + kurzv1alpha1.ReasonURLRefused))
	g.Expect(getWebhook(g, wh).Status.LastError).To(Equal("address refused: 127.0.0.1 is a loopback address"))
	g.Expect(rc.requests()).To(BeEmpty())
}

func mustURL(t *testing.T, s string) *url.URL {
	t.Helper()
	u, err := url.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return u
}
