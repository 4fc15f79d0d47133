package clicks

import (
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/types"
)

// Clicks waiting to be written, computed when Prometheus scrapes: the
// counts of the queued counters (and of the batch a flush round holds),
// plus the writes whose outcome is unknown. Reading them costs a lock and
// an atomic load per queued Link, nothing on the click path.
var (
	pendingClicksDesc = prometheus.NewDesc("kurz_clicks_pending",
		"Clicks counted by this replica and not yet known to be stored in Link status (an API server outage makes it grow).", nil, nil)
	pendingLinksDesc = prometheus.NewDesc("kurz_clicks_pending_links",
		"Links with clicks counted by this replica and not yet known to be stored.", nil, nil)
)

// pendingCollector sums the pending clicks of the Writers running in the
// process: one in production; tests run several managers in one process.
type pendingCollector struct {
	mu      sync.Mutex
	writers map[*Writer]struct{}
}

var pendingClicks = &pendingCollector{writers: map[*Writer]struct{}{}}

// add counts w's pending clicks until the returned func is called.
func (p *pendingCollector) add(w *Writer) (remove func()) {
	p.mu.Lock()
	p.writers[w] = struct{}{}
	p.mu.Unlock()
	return func() {
		p.mu.Lock()
		delete(p.writers, w)
		p.mu.Unlock()
	}
}

func (p *pendingCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- pendingClicksDesc
	ch <- pendingLinksDesc
}

func (p *pendingCollector) Collect(ch chan<- prometheus.Metric) {
	p.mu.Lock()
	var links, clicks int64
	for w := range p.writers {
		l, c := w.pending()
		links += l
		clicks += c
	}
	p.mu.Unlock()
	ch <- prometheus.MustNewConstMetric(pendingClicksDesc, prometheus.GaugeValue, float64(clicks))
	ch <- prometheus.MustNewConstMetric(pendingLinksDesc, prometheus.GaugeValue, float64(links))
}

// pending returns the Links with clicks not known to be stored, and those
// clicks: queued counts, the patch in flight, and the writes whose outcome
// is unknown (as of the last flush round, or of its planning while the
// spool is on disk). It is a snapshot, exact between flush rounds; during
// one, a count may be read twice or not at all for the moment it moves.
func (w *Writer) pending() (links, clicks int64) {
	byLink := map[types.UID]int64{}
	if seen := w.unsureSeen.Load(); seen != nil {
		for uid, n := range *seen {
			byLink[uid] += n
		}
	}
	if w := w.inflight.Load(); w != nil {
		byLink[w.uid] += w.clicks
	}
	w.q.mu.Lock()
	// A counter clicked again during a round is in both lists: count it once.
	counted := make(map[*Counter]struct{}, len(w.q.cur)+len(w.q.flushing))
	for _, batch := range [][]*Counter{w.q.cur, w.q.flushing} {
		for _, c := range batch {
			if _, dup := counted[c]; dup {
				continue
			}
			counted[c] = struct{}{}
			if n := c.n.Load(); n > 0 {
				byLink[c.link.UID] += n
			}
		}
	}
	w.q.mu.Unlock()
	for _, n := range byLink {
		if n > 0 {
			links++
			clicks += n
		}
	}
	return links, clicks
}

// roundDone ends a flush round: its batch is back in the queue (what it
// could not write) or stored, and its unknown-outcome writes are published
// for pending.
func (w *Writer) roundDone() {
	w.q.roundDone()
	w.publishUnsure()
}

// publishUnsure copies the unknown-outcome writes for pending.
func (w *Writer) publishUnsure() {
	seen := make(map[types.UID]int64, len(w.unsure))
	for uid, u := range w.unsure {
		seen[uid] = u.Delta
	}
	w.unsureSeen.Store(&seen)
}

// inflightWrite is the clicks of one Link that a flush is sending.
type inflightWrite struct {
	uid    types.UID
	clicks int64
}
