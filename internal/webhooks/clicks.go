package webhooks

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"time"
	"unsafe"

	"k8s.io/apimachinery/pkg/types"

	kurzv1alpha1 "github.com/kurz-dev/kurz/api/v1alpha1"
	"github.com/kurz-dev/kurz/internal/analytics"
)

// A click is an analytics.Event: the redirect's capture enriches it once
// (User-Agent classes, referrer host, UTM values), off the request
// goroutine, and both the analytics store and link.clicked take it. The
// payload carries its dimensions and count, never Visitor (a hash of the
// visitor's address and User-Agent).

// ClickSink takes the clicks of a redirect server. Clicked never waits
// for a receiver: a click is added to its batches on the caller's
// goroutine, and a batch that does not fit its Webhook's queue is dropped
// and counted. The Event is read, not kept; the caller may reuse it.
type ClickSink interface {
	Clicked(*analytics.Event)
}

// The Dispatcher is the capture's sink (analytics.Sink has this method
// set): it never waits for a receiver and keeps no pointer to the Event.
var _ ClickSink = (*Dispatcher)(nil)

// Batching of link.clicked: a request holds at most the Webhook's
// spec.maxClicksPerRequest clicks (defaultMaxClicks) and maxBatchBytes of
// JSON (about 280 clicks of typical size), and a click waits at most
// maxBatchWait for its batch to fill.
//
// A receiver that takes larger batches costs the replica less: most of
// what a batch costs is per request, not per click (BenchmarkClickDelivery: about 3.2 µs of
// CPU a click in batches of 100, 1.2 to 1.5 µs in batches of 500 to 1000,
// of which about 1 µs is encoding and signing): the handshake-free but
// still per-request work of the HTTP connection's write and read loops,
// the TLS records and the syscalls. 96 KiB stays under the smallest body
// limit receivers commonly have by default (100 kB, Express's JSON body
// parser), and with the request's headers within one write buffer
// (writeBufferSize), so a batch leaves in one TLS write.
const (
	defaultMaxClicks = 100
	maxBatchBytes    = 96 << 10
	maxBatchWait     = time.Second
	batchTick        = 100 * time.Millisecond
)

// Clicked adds a click to the link.clicked batches of the Webhooks that
// want it, on the caller's goroutine: the capture's consumer, which reads
// the click from the redirect's ring slot and hands it over at once. The
// click is written into each batch's buffer there and then, rather than
// copied into an inbox for a goroutine of the dispatcher to batch: that
// inbox (65 536 Events, 15.7 MB) was written and read once per click at
// an address cold by then, and handing a click over woke the batching
// goroutine, which cost a replica more than the batching itself. Nothing
// here waits for a receiver: a full batch is handed to its Webhook's
// queue, which refuses what does not fit (dropped and counted). While no
// Webhook wants link.clicked it returns at once (nothing to send, nothing
// lost: the batches would find no Webhook either).
func (d *Dispatcher) Clicked(e *analytics.Event) {
	if !d.wantClicks.Load() {
		return
	}
	d.batchMu.Lock()
	d.addClick(e)
	d.batchMu.Unlock()
}

// sendWaitingBatches sends each Webhook's link.clicked batch whose first
// click waited maxBatchWait; Clicked sends those that filled.
func (d *Dispatcher) sendWaitingBatches(ctx context.Context) {
	tick := time.NewTicker(batchTick)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
			d.batchMu.Lock()
			now := d.now()
			for s := range d.filling {
				if now.Sub(s.batchStart) >= maxBatchWait {
					d.sendBatch(s)
					delete(d.filling, s)
				}
			}
			d.batchMu.Unlock()
		}
	}
}

// addClick adds c to the batch of each Webhook of its namespace that
// wants it, and sends a batch that has all the clicks it may hold.
// batchMu held.
func (d *Dispatcher) addClick(c *analytics.Event) {
	var link *kurzv1alpha1.Link
	looked := false
	// click is the click's JSON once a batch has it: written once,
	// whatever the Webhooks it goes to.
	var click []byte
	for _, s := range d.clickSenders(c.Link.Namespace) {
		cfg := s.cfg.Load()
		if cfg.filtersLinks() {
			if !looked {
				link, looked = d.cachedLink(c.Link), true
			}
			if link == nil || !cfg.selects(link.Labels, link.Spec.Tags) {
				continue
			}
		}
		click = d.appendClick(s, c, click)
		// A batch with all the clicks it may hold leaves at once.
		if s.batchLen++; s.batchLen >= cfg.maxClicks {
			d.sendBatch(s)
			delete(d.filling, s)
		}
	}
}

// appendClick appends c to s's batch, straight into the batch's buffer:
// click, its JSON, when another batch has it already, else written here.
// It returns the click's JSON as s's batch holds it; that stays as it is
// until the next click (a body, once queued, is never changed, and a
// buffer kept is written again only by the next click). batchMu held.
func (d *Dispatcher) appendClick(s *sender, c *analytics.Event, click []byte) []byte {
	if s.batchLen == 0 {
		d.startBatch(s, c)
	} else {
		s.batch = append(s.batch, ',')
	}
	start := len(s.batch)
	if click != nil {
		s.batch = append(s.batch, click...)
	} else {
		s.batch = d.enc.appendClick(s.batch, c)
	}
	// A click that takes the body past its bytes starts the next batch
	// (a click alone always makes one, whatever its size): it moves out
	// of this batch's buffer, which the batch may leave in.
	if s.batchLen > 0 && len(s.batch)+len(clicksTail) > maxBatchBytes {
		d.click = append(d.click[:0], s.batch[start:]...)
		s.batch = s.batch[:start-1] // and its comma
		d.sendBatch(s)
		d.startBatch(s, c)
		start = len(s.batch)
		s.batch = append(s.batch, d.click...)
	}
	return s.batch[start:]
}

// startBatch starts s's next batch with c, its first click. batchMu held.
func (d *Dispatcher) startBatch(s *sender, c *analytics.Event) {
	s.batchStart = d.now()
	s.batch = d.enc.clicksHead(s.batch[:0], c)
	d.filling[s] = struct{}{}
}

// clickSenders returns the senders of the Webhooks of namespace that
// want link.clicked. It resolves them (the informer's index, the senders'
// map and its lock) once per namespace until a Webhook changes, not for
// every click. Nil before Start. batchMu held.
func (d *Dispatcher) clickSenders(namespace string) []*sender {
	// The count is read before the store: a change in between makes the
	// next click resolve again.
	if gen := d.webhooksGen.Load(); d.routes == nil || gen != d.routesGen {
		d.routes, d.routesGen = map[string][]*sender{}, gen
	}
	if ss, ok := d.routes[namespace]; ok {
		return ss
	}
	var ss []*sender
	resolved := true
	for _, w := range d.webhooksOf(namespace) {
		if !wants(w, kurzv1alpha1.EventLinkClicked) {
			continue
		}
		s := d.senderFor(w)
		if s == nil { // not started, or w deleted since it was read
			resolved = false // so the next click resolves again
			continue
		}
		ss = append(ss, s)
	}
	if resolved {
		d.routes[namespace] = ss
	}
	return ss
}

// cachedLink is the cache's Link of ref (read only), nil when it is gone
// or another object now has its name. batchMu held.
func (d *Dispatcher) cachedLink(ref analytics.LinkRef) *kurzv1alpha1.Link {
	// The key is written into a reused buffer and viewed as a string, not
	// concatenated: a fresh string a click was the only allocation of a
	// click to a Webhook with a linkSelector (TestClickAllocatesNothing).
	// The indexer only looks the key up in its map, it does not keep it.
	d.linkKey = append(append(append(d.linkKey[:0], ref.Namespace...), '/'), ref.Name...)
	obj, ok, err := d.links.GetByKey(unsafe.String(unsafe.SliceData(d.linkKey), len(d.linkKey)))
	if err != nil || !ok {
		return nil
	}
	l, ok := obj.(*kurzv1alpha1.Link)
	if !ok || string(l.UID) != ref.UID {
		return nil
	}
	return l
}

// sendBatch queues s's batch and starts the next one. batchMu held.
func (d *Dispatcher) sendBatch(s *sender) {
	if s.batchLen == 0 {
		return
	}
	// A batch that fills most of its buffer leaves in it, not in a copy
	// (a copy cost about as much as encoding the clicks: the whole body
	// moved once more), and the next batch gets a buffer of the same
	// capacity; a smaller one (its second waited maxBatchWait) leaves in
	// a copy of its exact size and the buffer stays, so that neither a
	// partial batch holds a large buffer in the queue nor the next full
	// one grows a small buffer again. The queue holds the body, and counts
	// its capacity, until it is delivered or given up; it is never reused,
	// so the HTTP transport may take it as the in-memory body it writes
	// with the headers in one go (attempt).
	var body []byte
	if size := len(s.batch) + len(clicksTail); size <= cap(s.batch) && size >= cap(s.batch)*3/4 {
		body = append(s.batch, clicksTail...)
		s.batch = make([]byte, 0, cap(body))
	} else {
		body = append(append(make([]byte, 0, size), s.batch...), clicksTail...)
		s.batch = s.batch[:0]
	}
	n := s.batchLen
	s.batchLen = 0
	s.batchSeq++
	s.enqueue(&delivery{typ: kurzv1alpha1.EventLinkClicked, id: d.batchID(s.cfg.Load().uid, s.batchSeq), body: body, clicks: n})
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
