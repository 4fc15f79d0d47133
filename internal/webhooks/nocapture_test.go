package webhooks_test

import (
	"context"
	"encoding/json"
	"net/http"
	"runtime"
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
	"github.com/kurz-dev/kurz/internal/manager"
	"github.com/kurz-dev/kurz/internal/testenv"
)

// TestClicksWithoutAnalytics: a replica wired as `kurz manager` wires it
// by default (no analytics store, no OTLP endpoint: analytics off) sends
// link.clicked for real redirects to a Webhook that subscribes to it, and
// stops capturing when that Webhook is gone.
func TestClicksWithoutAnalytics(t *testing.T) {
	testenv.Need(t)
	g := NewWithT(t)
	ctx := context.Background()
	dns := dnstest.Start(t)
	rc := newReceiver(t)
	ns := newNamespace(t)
	o := replicaOptions(t, dns, caFile(t, rc))
	g.Expect(o.Analytics.Enabled).To(BeFalse(), "kurz manager's default")
	g.Expect(o.Analytics.Store).To(BeEmpty())
	o.EnableRedirect = true
	o.Redirect.BindAddress = testenv.FreeAddr(t)
	o.Redirect.ShutdownTimeout = 2 * time.Second
	startReplica(t, o)

	host := verifiedDomain(t, dns, ns)
	l := newLink(ns, "clicked", host, "go")
	g.Expect(k8sClient.Create(ctx, l)).To(Succeed())
	follow := func(g Gomega) {
		req, err := http.NewRequest(http.MethodGet, "http://"+o.Redirect.BindAddress+"/go?utm_source=newsletter", nil)
		g.Expect(err).NotTo(HaveOccurred())
		req.Host = host
		req.Header.Set("User-Agent", "Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1")
		req.Header.Set("Referer", "https://news.example.com/today")
		res, err := noRedirects.Do(req)
		g.Expect(err).NotTo(HaveOccurred())
		_ = res.Body.Close()
		g.Expect(res.StatusCode).To(Equal(http.StatusFound))
	}
	g.Eventually(follow, timeout, poll).Should(Succeed())

	secret := newSecret(t, ns, "signing", true)
	wh := newWebhook(t, ns, "clicks", rc.url(), "signing", kurzv1alpha1.EventLinkClicked)
	g.Eventually(readyOf(wh), timeout, poll).Should(Equal("True/" + kurzv1alpha1.ReasonSubscribed))
	// The capture starts once the dispatcher saw the Webhook: follow
	// until a click arrives (each batch waits up to a second).
	g.Eventually(func(g Gomega) []received {
		follow(g)
		return rc.ofType(g, kurzv1alpha1.EventLinkClicked)
	}, timeout, time.Second).ShouldNot(BeEmpty())
	r := rc.ofType(g, kurzv1alpha1.EventLinkClicked)[0]
	verify(g, secret, r)
	var b clickBody
	g.Expect(json.Unmarshal(r.payload(g).Data, &b)).To(Succeed())
	g.Expect(b.Clicks).NotTo(BeEmpty())
	c := b.Clicks[0]
	g.Expect(c["link"]).To(HaveKeyWithValue("id", string(l.UID)))
	g.Expect(c).To(HaveKeyWithValue("device", "mobile"))
	g.Expect(c).To(HaveKeyWithValue("os", "iOS"))
	g.Expect(c).To(HaveKeyWithValue("referrer", "news.example.com"))
	g.Expect(c).To(HaveKeyWithValue("utm_source", "newsletter"))

	// Without the Webhook, clicks are no longer captured nor sent.
	g.Expect(k8sClient.Delete(ctx, wh)).To(Succeed())
	g.Eventually(func(g Gomega) { g.Expect(apiGone(wh)).To(BeTrue()) }, timeout, poll).Should(Succeed())
	time.Sleep(2 * time.Second) // a batch in flight lands (maxBatchWait)
	before := len(rc.requests())
	for range 5 {
		follow(g)
	}
	g.Consistently(func() int { return len(rc.requests()) }, 3*time.Second, poll).Should(Equal(before))
}

// noRedirects is a client that reports a redirect instead of following it.
var noRedirects = &http.Client{
	Timeout:       10 * time.Second,
	CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
}

func apiGone(w *kurzv1alpha1.Webhook) bool {
	err := k8sClient.Get(context.Background(), client.ObjectKeyFromObject(w), &kurzv1alpha1.Webhook{})
	return client.IgnoreNotFound(err) == nil && err != nil
}

// verifiedDomain creates a Domain in ns proven by its TXT record in dns and
// returns its host once it is Active.
func verifiedDomain(t testing.TB, dns *dnstest.Server, ns string) string {
	t.Helper()
	g := NewWithT(t)
	ctx := context.Background()
	nsObj := &corev1.Namespace{}
	g.Expect(k8sClient.Get(ctx, types.NamespacedName{Name: ns}, nsObj)).To(Succeed())
	host := unique("go") + ".test"
	dns.Set(kurzv1alpha1.ChallengeRecordPrefix+host, mdns.TypeTXT, claims.ChallengeValue(nsObj.UID, host))
	d := &kurzv1alpha1.Domain{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "go"}, Spec: kurzv1alpha1.DomainSpec{Domain: kurzv1alpha1.Hostname(host)}}
	g.Expect(k8sClient.Create(ctx, d)).To(Succeed())
	g.Eventually(func(g Gomega) kurzv1alpha1.DomainPhase {
		g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(d), d)).To(Succeed())
		return d.Status.Phase
	}, timeout, poll).Should(Equal(kurzv1alpha1.DomainActive))
	return host
}

// TestNoClickInboxWithoutAWebhook: webhooks on (as in kurz manager) and no
// Webhook cost no measurable heap: the on-demand capture's ring is made
// only when a Webhook wants link.clicked (and clicks have no inbox of
// their own any more: Clicked batches them). It compares the heap a
// replica's wiring holds with webhooks on and off.
func TestNoClickInboxWithoutAWebhook(t *testing.T) {
	testenv.Need(t)
	g := NewWithT(t)
	o := manager.DefaultOptions()
	o.MetricsBindAddress, o.HealthProbeBindAddress = "0", "0"
	o.EnableControllers = false
	o.Redirect.BindAddress = testenv.FreeAddr(t)
	o.API.BindAddress = testenv.FreeAddr(t)
	held := func(webhooks bool) int64 {
		o := o
		o.EnableWebhooks = webhooks
		before := heapAlloc()
		m, err := manager.New(context.Background(), cfg, o)
		g.Expect(err).NotTo(HaveOccurred())
		after := heapAlloc()
		runtime.KeepAlive(m)
		return int64(after) - int64(before)
	}
	held(true) // the first one registers metrics and the like, once
	off, on := held(false), held(true)
	t.Logf("heap held by the wiring: webhooks off %d KiB, on (no Webhook) %d KiB", off>>10, on>>10)
	g.Expect(on-off).To(BeNumerically("<", 1<<20), "webhooks without a Webhook hold less than 1 MiB more")
}

func heapAlloc() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}
