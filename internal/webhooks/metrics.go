package webhooks

import (
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
)

// Per-delivery figures are metrics, never status writes. No metric has a
// label per Webhook: tenants create Webhooks, and a label per object
// would let them grow the metrics without bound.
var (
	deliveries = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "kurz_webhook_deliveries_total",
		Help: "Webhook delivery attempts of this replica, by result: success (2xx), http_error, gone (410), timeout, tls, network, refused (a refused address).",
	}, []string{"result"})
	deliverySeconds = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name:    "kurz_webhook_delivery_duration_seconds",
		Help:    "Duration of webhook delivery attempts, until the answer's status and first bytes were read.",
		Buckets: prometheus.ExponentialBuckets(0.005, 2.5, 10), // 5ms .. ~19s
	})
	queueDepth = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "kurz_webhook_queue_depth",
		Help: "Webhook deliveries waiting on this replica, all Webhooks together.",
	})
	queueBytes = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "kurz_webhook_queue_bytes",
		Help: "Bytes of the webhook deliveries waiting on this replica (bodies and bookkeeping), all Webhooks together.",
	})
	dropped = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "kurz_webhook_dropped_total",
		Help: "Webhook events given up on this replica, by reason: queue_full, inbox_full (a change event), attempts (every attempt failed), gone (410), refused (a refused address or URL), secret (no valid signing Secret), deleted (the Webhook was), shutdown.",
	}, []string{"reason"})
	events = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "kurz_webhook_events_total",
		Help: "Webhook events queued for delivery on this replica, by type (a link.clicked batch counts once; kurz_webhook_clicks_total counts its clicks).",
	}, []string{"type"})
	clicksQueued = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "kurz_webhook_clicks_total",
		Help: "Clicks queued in link.clicked batches on this replica (a click sent to two Webhooks counts twice).",
	})
)

var registerMetrics sync.Once

func register() {
	registerMetrics.Do(func() {
		metrics.Registry.MustRegister(deliveries, deliverySeconds, queueDepth, queueBytes, dropped, events, clicksQueued)
	})
}

// Drop reasons (the reason label of kurz_webhook_dropped_total).
const (
	dropQueueFull = "queue_full"
	dropInboxFull = "inbox_full"
	dropAttempts  = "attempts"
	dropGone      = "gone"
	dropRefused   = "refused"
	dropSecret    = "secret"
	dropDeleted   = "deleted"
	dropShutdown  = "shutdown"
)
