package webhooks

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"time"

	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"

	kurzv1alpha1 "github.com/kurz-dev/kurz/api/v1alpha1"
)

// LinkRef names the Link of a click.
type LinkRef struct {
	UID             types.UID
	Namespace, Name string
	Domain, Key     string
}

// Click is one visit that followed a Link, with the analytics dimensions
// of the visitor (empty: unknown). It holds nothing that identifies the
// visitor: no address, no User-Agent, no visitor hash.
type Click struct {
	Time time.Time
	Link LinkRef
	// Device is desktop, mobile, tablet, bot or other.
	Device, OS, Browser string
	// Country is ISO 3166-1 alpha-2, upper case.
	Country string
	// Referrer is the referring page's host only.
	Referrer                          string
	UTMSource, UTMMedium, UTMCampaign string
}

// ClickSink takes the clicks of a redirect server. Clicked never blocks:
// a click that finds the inbox full is dropped and counted.
type ClickSink interface {
	Clicked(Click)
}

// Batching of link.clicked: a request carries up to maxBatch clicks, and
// a click waits at most maxBatchWait for its batch to fill.
const (
	maxBatch     = 100
	maxBatchWait = time.Second
	batchTick    = 100 * time.Millisecond
)

// Clicked hands a click to the link.clicked batches; it never blocks.
func (d *Dispatcher) Clicked(c Click) {
	select {
	case d.clicks <- c:
	default:
		dropped.WithLabelValues(dropClicksFull).Inc()
	}
}

// batchClicks fills each Webhook's link.clicked batch and sends it when it
// holds maxBatch clicks or its first click waited maxBatchWait.
func (d *Dispatcher) batchClicks(ctx context.Context) {
	tick := time.NewTicker(batchTick)
	defer tick.Stop()
	filling := map[*sender]struct{}{}
	for {
		select {
		case <-ctx.Done():
			return
		case c := <-d.clicks:
			d.addClick(ctx, c, filling)
		case <-tick.C:
			now := d.now()
			for s := range filling {
				if now.Sub(s.batchStart) >= maxBatchWait {
					d.sendBatch(ctx, s)
					delete(filling, s)
				}
			}
		}
	}
}

func (d *Dispatcher) addClick(ctx context.Context, c Click, filling map[*sender]struct{}) {
	var link *kurzv1alpha1.Link
	looked := false
	for _, w := range d.webhooksOf(c.Link.Namespace) {
		if !wants(w, kurzv1alpha1.EventLinkClicked) {
			continue
		}
		s := d.senderFor(w)
		if s == nil {
			return
		}
		if cfg := s.cfg.Load(); cfg.filtersLinks() {
			if !looked {
				link, looked = d.cachedLink(c.Link), true
			}
			if link == nil || !cfg.selects(link.Labels, link.Spec.Tags) {
				continue
			}
		}
		if len(s.batch) == 0 {
			s.batchStart = d.now()
			filling[s] = struct{}{}
		}
		s.batch = append(s.batch, c)
		if len(s.batch) >= maxBatch {
			d.sendBatch(ctx, s)
			delete(filling, s)
		}
	}
}

// cachedLink is the cache's Link of ref (read only), nil when it is gone
// or another object now has its name.
func (d *Dispatcher) cachedLink(ref LinkRef) *kurzv1alpha1.Link {
	obj, ok, err := d.links.GetByKey(ref.Namespace + "/" + ref.Name)
	if err != nil || !ok {
		return nil
	}
	l, ok := obj.(*kurzv1alpha1.Link)
	if !ok || l.UID != ref.UID {
		return nil
	}
	return l
}

// sendBatch queues s's batch and starts a new one.
func (d *Dispatcher) sendBatch(ctx context.Context, s *sender) {
	batch := s.batch
	s.batch = make([]Click, 0, len(batch))
	if len(batch) == 0 {
		return
	}
	body, err := clicksBody(batch)
	if err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "cannot encode a link.clicked batch", "webhook", s.key)
		return
	}
	s.batchSeq++
	s.enqueue(&delivery{typ: kurzv1alpha1.EventLinkClicked, id: d.batchID(s.cfg.Load().uid, s.batchSeq), body: body, clicks: len(batch)})
}

// batchID is the webhook-id of a link.clicked batch: unique to this
// process, the Webhook and the batch, the same for its retries.
func (d *Dispatcher) batchID(webhook types.UID, seq uint64) string {
	h := sha256.New()
	h.Write([]byte(d.replica))
	h.Write([]byte{0})
	h.Write([]byte(webhook))
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], seq)
	h.Write(b[:])
	return "clk_" + hex.EncodeToString(h.Sum(nil)[:16])
}
