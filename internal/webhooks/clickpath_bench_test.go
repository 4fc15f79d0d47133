package webhooks

import (
	"context"
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

// BenchmarkClickPath is what one click costs webhooks on the replica's
// CPU from Clicked to the signed body of its batch, without a control
// plane or a network: Clicked (the capture's goroutine) batching the
// click (one Webhook of the namespace that wants link.clicked, of every
// Link or of the Links with a tag) and the signature of each full batch.
// One op is one click, so ns/op and allocs/op are per click. The clicks are spread over 1000 Links, with
// the capture's interned strings (the same Event fields for a Link).
func BenchmarkClickPath(b *testing.B) {
	for _, selected := range []bool{false, true} {
		b.Run(map[bool]string{false: "every-link", true: "by-tag"}[selected], func(b *testing.B) {
			p := newClickPath(b, selected)
			size := fullBatch()
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				p.ev.Link = p.links[i%len(p.links)]
				p.d.Clicked(&p.ev)
				i++
				if i%size == 0 {
					p.flush(b)
				}
			}
		})
	}
}

// clickPath is a dispatcher with one Webhook's sender, its loop driven
// by the benchmark.
type clickPath struct {
	d     *Dispatcher
	s     *sender
	key   []byte
	links []analytics.LinkRef
	ev    analytics.Event
	ctx   context.Context
}

func newClickPath(b testing.TB, selected bool) *clickPath {
	b.Helper()
	register()
	idx := func() toolscache.Indexer {
		return toolscache.NewIndexer(toolscache.MetaNamespaceKeyFunc,
			toolscache.Indexers{toolscache.NamespaceIndex: toolscache.MetaNamespaceIndexFunc})
	}
	ctx := context.Background()
	d := &Dispatcher{
		o: DefaultOptions(), webhooks: idx(), links: idx(), now: time.Now, replica: "bench_replica",
		senders: map[types.UID]*sender{}, ctx: ctx, filling: map[*sender]struct{}{},
	}
	w := &kurzv1alpha1.Webhook{
		ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "hook", UID: "0b7e6a2c-9f3d-4e1a-8c55-2d4f6b8a1e90", Generation: 1},
		Spec: kurzv1alpha1.WebhookSpec{URL: "https://receiver.example.com/hook", Events: []kurzv1alpha1.WebhookEvent{kurzv1alpha1.EventLinkClicked},
			// A receiver that takes large batches: a batch is full at
			// maxBatchBytes (fullBatch clicks).
			SecretRef: kurzv1alpha1.WebhookSecretRef{Name: "signing"}, MaxClicksPerRequest: 1000},
	}
	if selected {
		w.Spec.LinkSelector = &kurzv1alpha1.WebhookLinkSelector{Tags: []string{"launch"}}
	}
	if err := d.webhooks.Add(w); err != nil {
		b.Fatal(err)
	}
	p := &clickPath{d: d, key: make([]byte, 32), ctx: ctx}
	_, _ = rand.Read(p.key)
	for i := range 1000 {
		l := benchLink()
		l.Name, l.Spec.Key = fmt.Sprintf("l%d", i), fmt.Sprintf("k%d", i)
		l.UID = types.UID(fmt.Sprintf("6f1c2a84-5b0e-4d4b-9a51-%012d", i))
		if err := d.links.Add(l); err != nil {
			b.Fatal(err)
		}
		p.links = append(p.links, analytics.LinkRef{UID: string(l.UID), Namespace: l.Namespace, Name: l.Name, Domain: string(l.Spec.Domain), Key: l.Spec.Key})
	}
	p.s = &sender{d: d, key: types.NamespacedName{Namespace: w.Namespace, Name: w.Name}, q: newQueue(1 << 30), done: make(chan struct{})}
	p.s.cfg.Store(d.configOf(w))
	d.senders[w.UID] = p.s
	d.wantClicks.Store(true)
	p.ev = analytics.Event{Time: time.Now(), Device: analytics.DeviceMobile, OS: "iOS", Browser: "Safari", Country: "DE",
		Referrer: "news.example.com", UTMSource: "newsletter", UTMCampaign: "spring", Clicks: 1}
	return p
}

// flush queues the batch of the clicks handed over, and signs the body
// of each batch queued.
func (p *clickPath) flush(b *testing.B) {
	p.batch()
	p.sign(b)
}

// batch queues the batch the clicks handed over made (as its wait would).
func (p *clickPath) batch() {
	p.d.sendBatch(p.s)
	delete(p.d.filling, p.s)
}

// sign signs the bodies of the batches queued.
func (p *clickPath) sign(b *testing.B) {
	for len(p.s.q.items) > p.s.q.head {
		dl, _ := p.s.q.pop(p.ctx)
		if sig := signature([][]byte{p.key}, dl.id, 1764130000, dl.body); sig == "" {
			b.Fatal("no signature")
		}
	}
}
