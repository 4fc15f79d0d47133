package capture

import (
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
)

// Reasons a click's analytics event is dropped (the label of
// kurz_analytics_dropped_clicks_total). The click itself is always counted
// in its Link's status.
const (
	dropRingFull    = "ring_full"    // the redirect found the ring full
	dropQueueFull   = "queue_full"   // the store writer's batch queue was full
	dropStoreFailed = "store_failed" // the store refused a batch on every attempt
	dropStopped     = "stopped"      // the replica stopped before the batch was written
)

var (
	eventsTotal = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "kurz_analytics_events_total",
		Help: "Clicks the analytics consumer took from the capture ring and enriched.",
	})
	droppedTotal = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "kurz_analytics_dropped_clicks_total",
		Help: "Clicks whose analytics event was dropped, by reason (ring_full, queue_full, store_failed, stopped; otlp_queue_full, otlp_failed, otlp_stopped for the OTLP export); the Link's click count is not affected.",
	}, []string{"reason"})
	rowsWritten = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "kurz_analytics_rows_written_total",
		Help: "Aggregated analytics rows (identical clicks of one minute summed) the store accepted.",
	})
	clicksWritten = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "kurz_analytics_clicks_written_total",
		Help: "Clicks in the analytics batches the store accepted.",
	})
	writeErrors = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "kurz_analytics_write_errors_total",
		Help: "Failed analytics store writes (each attempt).",
	})
	writeSeconds = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name:    "kurz_analytics_write_duration_seconds",
		Help:    "Time of one analytics batch write to the store.",
		Buckets: prometheus.ExponentialBuckets(0.001, 4, 8), // 1 ms .. 16 s
	})
	exportedClicks = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "kurz_analytics_exported_clicks_total",
		Help: "Clicks in the analytics batches an exporter (otlp) accepted.",
	}, []string{"output"})
	exportErrors = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "kurz_analytics_export_errors_total",
		Help: "Failed analytics exports (each Write, after the exporter's own retries).",
	}, []string{"output"})
	geoipReloadErrors = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "kurz_analytics_geoip_reload_errors_total",
		Help: "Failed reloads of --geoip-database (the previous version keeps answering).",
	})
	ringFull  = droppedTotal.WithLabelValues(dropRingFull)
	queueFull = droppedTotal.WithLabelValues(dropQueueFull)

	registerOnce sync.Once
)

// RegisterMetrics adds the collectors to controller-runtime's registry, once
// per process.
func RegisterMetrics() {
	registerOnce.Do(func() {
		metrics.Registry.MustRegister(eventsTotal, droppedTotal, rowsWritten, clicksWritten, writeErrors, writeSeconds,
			exportedClicks, exportErrors, geoipReloadErrors)
	})
}

// GeoIPReloadFailed counts a failed reload of the GeoIP database.
func GeoIPReloadFailed() { geoipReloadErrors.Inc() }
