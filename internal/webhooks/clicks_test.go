package webhooks_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	kurzv1alpha1 "github.com/kurz-dev/kurz/api/v1alpha1"
	"github.com/kurz-dev/kurz/internal/analytics"
	"github.com/kurz-dev/kurz/internal/scheme"
	"github.com/kurz-dev/kurz/internal/testenv"
	"github.com/kurz-dev/kurz/internal/webhooks"
)

// startDispatcher runs a dispatcher alone on a manager of its own (no
// controllers), with the cache settings it needs.
func startDispatcher(t *testing.T, o webhooks.Options) (*webhooks.Dispatcher, cache.Cache) {
	t.Helper()
	g := NewWithT(t)
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:                 scheme.Scheme,
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		Cache:                  cache.Options{ByObject: webhooks.CacheSecrets(nil)},
	})
	g.Expect(err).NotTo(HaveOccurred())
	d, err := webhooks.Setup(mgr, o)
	g.Expect(err).NotTo(HaveOccurred())
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("manager: %v", err)
		}
	})
	g.Expect(mgr.GetCache().WaitForCacheSync(ctx)).To(BeTrue())
	return d, mgr.GetCache()
}

type clickBody struct {
	Clicks []map[string]any `json:"clicks"`
}

// TestClicksAreBatched: 700 clicks on a selected Link reach the receiver
// in order as link.clicked batches of at most MaxBatchBytes each, every
// one but the last full (the next click would not have fit; the last
// within a second), each click with its link and analytics dimensions and
// nothing that identifies the visitor; clicks on a Link the selector
// leaves out are not sent.
func TestClicksAreBatched(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	c := newClicksWebhook(t)
	d, cached, rc, ns, secret, wh := c.d, c.cached, c.rc, c.ns, c.secret, c.wh
	g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(wh), wh)).To(Succeed())
	wh.Spec.LinkSelector = &kurzv1alpha1.WebhookLinkSelector{Tags: []string{"promo"}}
	// A receiver that takes large batches: the 96 KiB bound fills them.
	wh.Spec.MaxClicksPerRequest = 1000
	g.Expect(k8sClient.Update(ctx, wh)).To(Succeed())

	promo := newLink(ns, "promo", "go.test", "promo")
	promo.Spec.Tags = []string{"promo"}
	other := newLink(ns, "other", "go.test", "other")
	for _, l := range []*kurzv1alpha1.Link{promo, other} {
		g.Expect(k8sClient.Create(ctx, l)).To(Succeed())
	}
	// The dispatcher's cache holds the Links and the edited Webhook.
	g.Eventually(func(g Gomega) {
		for _, l := range []*kurzv1alpha1.Link{promo, other} {
			g.Expect(cached.Get(ctx, client.ObjectKeyFromObject(l), &kurzv1alpha1.Link{})).To(Succeed())
		}
		got := &kurzv1alpha1.Webhook{}
		g.Expect(cached.Get(ctx, client.ObjectKeyFromObject(wh), got)).To(Succeed())
		g.Expect(got.Spec.LinkSelector).NotTo(BeNil())
		g.Expect(got.Spec.MaxClicksPerRequest).To(BeEquivalentTo(1000))
	}, timeout, poll).Should(Succeed())
	g.Eventually(d.WantsClicks, timeout, poll).Should(BeTrue(), "the dispatcher saw a Webhook that wants link.clicked")
	ref := func(l *kurzv1alpha1.Link) analytics.LinkRef {
		return analytics.LinkRef{UID: string(l.UID), Namespace: ns, Name: l.Name, Domain: "go.test", Key: l.Spec.Key}
	}
	now := time.Now().UTC()
	e := &analytics.Event{Link: ref(promo), Visitor: 0xfeedface, Device: analytics.DeviceMobile, OS: "iOS", Browser: "Safari",
		Country: "DE", City: "DE/Berlin", Referrer: "news.example", UTMSource: "newsletter", Clicks: 1}
	const clicks = 700
	for i := range clicks {
		e.Time = now.Add(time.Duration(i) * time.Millisecond)
		d.Clicked(e) // copied: e is reused
		if i%25 == 0 {
			d.Clicked(&analytics.Event{Time: now, Link: ref(other), Device: analytics.DeviceDesktop, Clicks: 1})
		}
	}
	total := func(g Gomega) int {
		n := 0
		for _, r := range rc.requests() {
			var b clickBody
			g.Expect(json.Unmarshal(r.payload(g).Data, &b)).To(Succeed())
			n += len(b.Clicks)
		}
		return n
	}
	g.Eventually(total, timeout, poll).Should(Equal(clicks))
	reqs := rc.requests()
	// A click's JSON here is about 400 bytes: 96 KiB hold about 240.
	g.Expect(len(reqs)).To(BeNumerically(">=", 3), "700 clicks of about 400 bytes make three batches or more")
	// Clicked copied each click: the reused Event's 700 times all arrive
	// (a kept pointer would show its last time 700 times).
	times := map[any]bool{}
	last := ""
	for i, r := range reqs {
		verify(g, secret, r)
		g.Expect(len(r.body)).To(BeNumerically("<=", webhooks.MaxBatchBytes), "batch %d", i)
		if i < len(reqs)-1 {
			// Full: a click (under 1 KiB here) more would not have fit.
			g.Expect(len(r.body)).To(BeNumerically(">", webhooks.MaxBatchBytes-1024), "batch %d is full", i)
		}
		p := r.payload(g)
		g.Expect(p.Type).To(Equal("link.clicked"))
		var b clickBody
		g.Expect(json.Unmarshal(p.Data, &b)).To(Succeed())
		for _, c := range b.Clicks {
			// In order, within and across batches (one queue, first in
			// first out); the timestamps' text sorts as their times.
			ts, _ := c["timestamp"].(string)
			g.Expect(ts > last).To(BeTrue(), "click %s after %s", ts, last)
			last = ts
			g.Expect(c).To(HaveKeyWithValue("device", "mobile"))
			g.Expect(c).To(HaveKeyWithValue("country", "DE"))
			g.Expect(c).To(HaveKeyWithValue("city", "DE/Berlin"))
			g.Expect(c).To(HaveKeyWithValue("referrer", "news.example"))
			g.Expect(c).To(HaveKeyWithValue("utm_source", "newsletter"))
			g.Expect(c).To(HaveKeyWithValue("utm_medium", BeNil()))
			g.Expect(c["link"]).To(HaveKeyWithValue("id", string(promo.UID)))
			g.Expect(c).To(HaveKeyWithValue("count", BeNumerically("==", 1)))
			times[c["timestamp"]] = true
			g.Expect(c).NotTo(HaveKey("ip"))
			g.Expect(c).NotTo(HaveKey("visitor"))
			g.Expect(string(r.body)).NotTo(ContainSubstring("feedface"))
			g.Expect(string(r.body)).NotTo(ContainSubstring("4276993775"), "the visitor hash, in decimal")
		}
	}
	g.Expect(times).To(HaveLen(clicks))
	g.Expect(reqs[0].id).NotTo(Equal(reqs[1].id))
}

// By default a request holds at most 100 clicks (spec.maxClicksPerRequest),
// and a batch that has them leaves without waiting for the second.
func TestClickBatchesHoldMaxClicks(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	c := newClicksWebhook(t)
	d, cached, rc, ns, wh := c.d, c.cached, c.rc, c.ns, c.wh
	g.Eventually(func(g Gomega) {
		got := &kurzv1alpha1.Webhook{}
		g.Expect(cached.Get(ctx, client.ObjectKeyFromObject(wh), got)).To(Succeed())
		g.Expect(got.Spec.MaxClicksPerRequest).To(BeEquivalentTo(100), "the CRD's default")
	}, timeout, poll).Should(Succeed())
	g.Eventually(d.WantsClicks, timeout, poll).Should(BeTrue())
	link := analytics.LinkRef{UID: "0a0a0a0a-0000-4000-8000-000000000001", Namespace: ns, Name: "l", Domain: "go.test", Key: "l"}
	now := time.Now().UTC()
	for i := range 250 {
		d.Clicked(&analytics.Event{Time: now.Add(time.Duration(i) * time.Millisecond), Link: link, Device: analytics.DeviceDesktop, Clicks: 1})
	}
	sizes := func(g Gomega) []int {
		var n []int
		for _, r := range rc.requests() {
			var b clickBody
			g.Expect(json.Unmarshal(r.payload(g).Data, &b)).To(Succeed())
			n = append(n, len(b.Clicks))
		}
		return n
	}
	// The two full batches go at once; the rest after its wait.
	g.Eventually(sizes, timeout, poll).Should(Equal([]int{100, 100, 50}))
}

// clicksWebhook is a dispatcher of its own, an HTTPS receiver and, in a
// new namespace, a signing Secret and a Webhook for link.clicked to it.
type clicksWebhook struct {
	d      *webhooks.Dispatcher
	cached cache.Cache
	rc     *receiver
	ns     string
	secret string
	wh     *kurzv1alpha1.Webhook
}

func newClicksWebhook(t *testing.T) clicksWebhook {
	testenv.Need(t)
	c := clicksWebhook{rc: newReceiver(t), ns: newNamespace(t)}
	o := webhooks.DefaultOptions()
	o.AllowLoopback, o.CAFile = true, caFile(t, c.rc)
	c.d, c.cached = startDispatcher(t, o)
	c.secret = newSecret(t, c.ns, "signing", true)
	c.wh = newWebhook(t, c.ns, "clicks", c.rc.url(), "signing", kurzv1alpha1.EventLinkClicked)
	return c
}
