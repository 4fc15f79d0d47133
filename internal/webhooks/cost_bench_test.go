package webhooks

import (
	"crypto/rand"
	"fmt"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	toolscache "k8s.io/client-go/tools/cache"

	kurzv1alpha1 "github.com/kurz-dev/kurz/api/v1alpha1"
	"github.com/kurz-dev/kurz/internal/analytics"
)

// What a delivery and an event cost on the CPU, without a control plane
// (docs/webhooks.md, "Figures"): signing a body, encoding a payload, and
// what a controller pays per change when webhooks are on.

func benchLink() *kurzv1alpha1.Link {
	return &kurzv1alpha1.Link{
		ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "docs", UID: types.UID("6f1c2a84-5b0e-4d4b-9a51-1f0c7e3d2b19"),
			Generation: 2, Labels: map[string]string{"team": "web"}, CreationTimestamp: metav1.Now()},
		Spec: kurzv1alpha1.LinkSpec{Domain: "go.example.com", Key: "docs", URL: "https://example.com/docs/getting-started?ref=short",
			Tags: []string{"docs", "launch"}},
	}
}

func benchClicks(n int) []analytics.Event {
	out := make([]analytics.Event, n)
	now := time.Now()
	for i := range out {
		out[i] = analytics.Event{Time: now, Link: analytics.LinkRef{UID: "6f1c2a84-5b0e-4d4b-9a51-1f0c7e3d2b19", Namespace: "team",
			Name: "docs", Domain: "go.example.com", Key: fmt.Sprintf("k%d", i)}, Device: analytics.DeviceMobile, OS: "iOS",
			Browser: "Safari", Country: "DE", Referrer: "news.example.com", UTMSource: "newsletter", UTMCampaign: "spring", Clicks: 1}
	}
	return out
}

// fullBatch is how many of benchClicks fill a link.clicked body of
// maxBatchBytes (about 290).
func fullBatch() int {
	n := 1
	for len(clicksBody(benchClicks(n+1))) <= maxBatchBytes {
		n++
	}
	return n
}

// BenchmarkSign is the webhook-signature of one body (one key): a
// link.created body (about 1 KiB) and a full link.clicked batch
// (maxBatchBytes).
func BenchmarkSign(b *testing.B) {
	key := make([]byte, 32)
	_, _ = rand.Read(key)
	created, err := changeBody(Created(benchLink()), "ws")
	if err != nil {
		b.Fatal(err)
	}
	clicked := clicksBody(benchClicks(fullBatch()))
	for _, c := range []struct {
		name string
		body []byte
	}{{"link.created", created}, {"link.clicked-full", clicked}} {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(c.body)))
			b.ReportAllocs()
			for b.Loop() {
				_ = signature([][]byte{key}, "evt_0123456789abcdef", 1764130000, c.body)
			}
		})
	}
}

// BenchmarkPayload encodes a link.created body (the API's link object)
// and a full link.clicked batch: the router's and the batcher's
// work per event or batch, once whatever the number of Webhooks.
func BenchmarkPayload(b *testing.B) {
	b.Run("link.created", func(b *testing.B) {
		c := Created(benchLink())
		b.ReportAllocs()
		for b.Loop() {
			if _, err := changeBody(c, "ws"); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("link.clicked-full", func(b *testing.B) {
		batch := benchClicks(fullBatch())
		b.ReportAllocs()
		for b.Loop() {
			_ = clicksBody(batch)
		}
	})
}

// BenchmarkControllerCost is what a Link controller pays per change for
// webhooks (controllers/webhook_events.go): Wants on the Webhook
// informer's index, and when a Webhook wants the event a copy of the
// Link, its id and a non-blocking send. "off" is a namespace no Webhook
// subscribes in.
func BenchmarkControllerCost(b *testing.B) {
	idx := toolscache.NewIndexer(toolscache.MetaNamespaceKeyFunc,
		toolscache.Indexers{toolscache.NamespaceIndex: toolscache.MetaNamespaceIndexFunc})
	if err := idx.Add(&kurzv1alpha1.Webhook{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "hook"},
		Spec: kurzv1alpha1.WebhookSpec{Events: []kurzv1alpha1.WebhookEvent{kurzv1alpha1.EventLinkCreated, kurzv1alpha1.EventLinkUpdated}}}); err != nil {
		b.Fatal(err)
	}
	register()
	d := &Dispatcher{webhooks: idx, changes: make(chan Change, changesInbox)}
	done := make(chan struct{})
	go func() {
		for range d.changes { //nolint:revive // drained
		}
		close(done)
	}()
	defer func() {
		close(d.changes)
		<-done
	}()
	for _, ns := range []string{"off", "team"} {
		b.Run(map[string]string{"off": "no-webhook", "team": "webhook"}[ns], func(b *testing.B) {
			l := benchLink()
			l.Namespace = ns
			b.ReportAllocs()
			for b.Loop() {
				if d.Wants(l.Namespace, kurzv1alpha1.EventLinkUpdated) {
					d.Emit(Updated(l.DeepCopy()))
				}
			}
		})
	}
}
