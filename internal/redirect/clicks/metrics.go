package clicks

import (
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
)

var (
	flushWrites = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "kurz_redirect_click_flush_writes_total",
		Help: "Link status writes that stored counted clicks.",
	})
	flushFailures = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "kurz_redirect_click_flush_failures_total",
		Help: "Link status writes of clicks that failed; their counts are kept for the next flush.",
	})

	clicksDropped = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "kurz_redirect_clicks_dropped_total",
		Help: "Counted clicks given up, by reason: spool_full (no room in the click spool during an outage; the Links with the fewest pending clicks go first), refused (an unanswered click write that kube-apiserver refused again and again at an unchanged resourceVersion).",
	}, []string{"reason"})

	registerOnce sync.Once
)

// Reasons clicks are dropped, the label of kurz_redirect_clicks_dropped_total.
const (
	reasonSpoolFull = "spool_full"
	reasonRefused   = "refused"
)

func init() {
	// Present (at 0) before the first drop, so a rate() has a start.
	for _, r := range []string{reasonSpoolFull, reasonRefused} {
		clicksDropped.WithLabelValues(r)
	}
}

// registerMetrics adds the collectors to controller-runtime's registry, once
// per process (tests run several Writers in one).
func registerMetrics() {
	registerOnce.Do(func() {
		metrics.Registry.MustRegister(flushWrites, flushFailures, clicksDropped, pendingClicks)
	})
}

// dropped counts clicks given up for reason (see clicksDropped); the caller
// logs them.
func (w *Writer) dropped(reason string, clicks int64) {
	if clicks <= 0 {
		return
	}
	clicksDropped.WithLabelValues(reason).Add(float64(clicks))
	w.droppedClicks.Add(clicks)
}
