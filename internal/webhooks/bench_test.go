package webhooks

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/pem"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	kurzv1alpha1 "github.com/kurz-dev/kurz/api/v1alpha1"
	"github.com/kurz-dev/kurz/internal/analytics"
	"github.com/kurz-dev/kurz/internal/parallel"
	"github.com/kurz-dev/kurz/internal/scheme"
	"github.com/kurz-dev/kurz/internal/testenv"
)

// The benchmarks of make bench-webhooks (docs/webhooks.md, "Figures").
// They run against the suite's kube-apiserver: 10 000 Links of one
// namespace, tagged, and one Webhook selecting them by tag, to an HTTPS
// receiver on loopback.

const benchLinks = 10000

// benchEnv is the Links, the Webhook and a running dispatcher.
type benchEnv struct {
	d     *Dispatcher
	links []analytics.LinkRef
	// clicks counts the clicks the receiver got; hold, when set, makes it
	// hang until the benchmark ends.
	clicks   atomic.Int64
	requests atomic.Int64
	// first and last are when the first and the latest request arrived
	// (unix nanoseconds).
	first, last atomic.Int64
	hold        chan struct{}
}

func newBench(b *testing.B, hang bool) *benchEnv {
	env := testenv.Need(b)
	ctx := context.Background()
	// client-go's default of 5 requests a second would take half an hour
	// to create the Links.
	cfg := rest.CopyConfig(env.Config)
	cfg.QPS, cfg.Burst = 500, 1000
	c, err := client.New(cfg, client.Options{Scheme: scheme.Scheme})
	must(b, err)
	e := &benchEnv{}
	if hang {
		e.hold = make(chan struct{})
		b.Cleanup(func() { close(e.hold) })
	}
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if e.hold != nil {
			select {
			case <-e.hold:
			case <-r.Context().Done():
			}
		}
		e.requests.Add(1)
		e.clicks.Add(int64(bytes.Count(body, []byte(`"count":`))))
		now := time.Now().UnixNano()
		e.first.CompareAndSwap(0, now)
		e.last.Store(now)
	}))
	b.Cleanup(srv.Close)
	caPath := filepath.Join(b.TempDir(), "ca.pem")
	if err := os.WriteFile(caPath, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}), 0o600); err != nil {
		b.Fatal(err)
	}

	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "wh-bench-"}}
	must(b, c.Create(ctx, ns))
	raw := make([]byte, 32)
	_, _ = rand.Read(raw)
	must(b, c.Create(ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns.Name, Name: "signing", Labels: map[string]string{kurzv1alpha1.WebhookSigningLabel: "true"}},
		StringData: map[string]string{"secret": "whsec_" + base64.StdEncoding.EncodeToString(raw)},
	}))
	must(b, c.Create(ctx, &kurzv1alpha1.Webhook{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns.Name, Name: "bench"},
		Spec: kurzv1alpha1.WebhookSpec{URL: srv.URL + "/hook", Events: []kurzv1alpha1.WebhookEvent{kurzv1alpha1.EventLinkClicked},
			SecretRef: kurzv1alpha1.WebhookSecretRef{Name: "signing"}, LinkSelector: &kurzv1alpha1.WebhookLinkSelector{Tags: []string{"bench"}}},
	}))
	e.links = make([]analytics.LinkRef, benchLinks)
	must(b, parallel.Each(ctx, 0, benchLinks, 8, func(i int) error {
		l := &kurzv1alpha1.Link{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns.Name, Name: fmt.Sprintf("l%d", i)},
			Spec: kurzv1alpha1.LinkSpec{Domain: "go.bench", Key: fmt.Sprintf("k%d", i), URL: "https://example.com/",
				Tags: []string{"bench"}},
		}
		if err := c.Create(ctx, l); err != nil {
			return err
		}
		e.links[i] = analytics.LinkRef{UID: string(l.UID), Namespace: ns.Name, Name: l.Name, Domain: "go.bench", Key: l.Spec.Key}
		return nil
	}))

	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme: scheme.Scheme, Metrics: metricsserver.Options{BindAddress: "0"}, HealthProbeBindAddress: "0",
		Cache: cache.Options{ByObject: CacheSecrets(nil)},
	})
	must(b, err)
	o := DefaultOptions()
	o.AllowLoopback, o.CAFile = true, caPath
	if e.d, err = Setup(mgr, o); err != nil {
		b.Fatal(err)
	}
	mctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- mgr.Start(mctx) }()
	b.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			b.Error(err)
		}
	})
	if !mgr.GetCache().WaitForCacheSync(mctx) {
		b.Fatal("cache did not sync")
	}
	var list kurzv1alpha1.LinkList
	must(b, mgr.GetCache().List(mctx, &list, client.InNamespace(ns.Name)))
	if len(list.Items) != benchLinks {
		b.Fatalf("the cache holds %d Links", len(list.Items))
	}
	// The dispatcher takes clicks once it saw a Webhook that wants them.
	for !e.d.WantsClicks() {
		time.Sleep(10 * time.Millisecond)
	}
	return e
}

func must(b *testing.B, err error) {
	b.Helper()
	if err != nil {
		b.Fatal(err)
	}
}

// click feeds n clicks, round robin over the Links, from one goroutine (a
// capture writer's).
func (e *benchEnv) click(n int) {
	ev := analytics.Event{Device: analytics.DeviceMobile, OS: "iOS", Browser: "Safari", Country: "DE",
		Referrer: "news.example.com", UTMSource: "newsletter", UTMCampaign: "spring", Clicks: 1}
	now := time.Now()
	for i := range n {
		ev.Time = now
		ev.Link = e.links[i%len(e.links)]
		e.d.Clicked(&ev)
	}
}

// BenchmarkWebhookClickDeliveries: 100 000 clicks spread over 10 000
// Links (ten each), fed as fast as one goroutine can, delivered in
// link.clicked batches to a receiver that answers at once. It reports the
// clicks and requests delivered per second between the first and the last
// request, the clicks that never arrived and the batches the full queue
// refused (a dropped batch counts once in kurz_webhook_dropped_total,
// whatever its clicks).
func BenchmarkWebhookClickDeliveries(b *testing.B) {
	e := newBench(b, false)
	const n = 100000
	b.ResetTimer()
	var delivered, requests int64
	var busy time.Duration
	for range b.N {
		e.clicks.Store(0)
		e.requests.Store(0)
		e.first.Store(0)
		queueBefore := droppedFor(dropQueueFull)
		e.click(n)
		e.settle()
		delivered += e.clicks.Load()
		requests += e.requests.Load()
		busy += time.Duration(e.last.Load() - e.first.Load())
		b.ReportMetric(float64(n-e.clicks.Load()), "clicks-lost")
		b.ReportMetric(droppedFor(dropQueueFull)-queueBefore, "queue-dropped-batches")
	}
	b.ReportMetric(float64(delivered)/busy.Seconds(), "clicks/s")
	b.ReportMetric(float64(requests)/busy.Seconds(), "requests/s")
}

// settle returns once the fed clicks are delivered or dropped: the
// queues are empty and no request came for longer than a batch waits to
// fill.
func (e *benchEnv) settle() {
	fed := time.Now().UnixNano()
	for {
		time.Sleep(100 * time.Millisecond)
		quiet := time.Unix(0, max(fed, e.last.Load()))
		if testutil.ToFloat64(queueDepth) == 0 && time.Since(quiet) > maxBatchWait+time.Second {
			return
		}
	}
}

// BenchmarkWebhookMemoryBound: the receiver hangs, and 300 000 clicks
// arrive (thirty per Link): the Webhook's queue fills to
// --webhook-queue-bytes and the rest is dropped and counted; the heap
// grows by about the queue, not by the clicks.
func BenchmarkWebhookMemoryBound(b *testing.B) {
	e := newBench(b, true)
	const n = 300000
	b.ResetTimer()
	for range b.N {
		runtime.GC()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		dropsBefore := totalDropped()
		// Clicked batches and queues or drops every click before it
		// returns; the last batch leaves after its wait.
		e.click(n)
		time.Sleep(2 * maxBatchWait)
		runtime.GC()
		runtime.ReadMemStats(&after)
		b.ReportMetric(testutil.ToFloat64(queueBytes), "queue-bytes")
		b.ReportMetric(float64(int64(after.HeapInuse)-int64(before.HeapInuse)), "heap-growth-bytes")
		b.ReportMetric(totalDropped()-dropsBefore, "dropped")
	}
}

// BenchmarkClicked is what handing one click to webhooks costs the
// goroutine that calls it (the capture's consumer, never the redirect's
// request goroutine): batching it for one Webhook of every Link, and
// queueing each full batch (the queue is emptied unsigned).
func BenchmarkClicked(b *testing.B) {
	p := newClickPath(b, false)
	size := fullBatch()
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		p.ev.Link = p.links[i%len(p.links)]
		p.d.Clicked(&p.ev)
		if i++; i%size == 0 {
			p.batch()
			for len(p.s.q.items) > p.s.q.head {
				p.s.q.pop(p.ctx)
			}
		}
	}
}

func droppedFor(reason string) float64 { return testutil.ToFloat64(dropped.WithLabelValues(reason)) }

func totalDropped() float64 {
	n := 0.0
	for _, r := range []string{dropQueueFull, dropInboxFull, dropAttempts, dropGone, dropRefused, dropSecret, dropDeleted, dropShutdown} {
		n += testutil.ToFloat64(dropped.WithLabelValues(r))
	}
	return n
}
