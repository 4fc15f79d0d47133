package redirect

import (
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
)

// outcome is what a redirect request got; its name labels
// kurz_redirect_requests_total.
type outcome uint8

const (
	outcomeRedirect         outcome = iota // to the link's destination (a click)
	outcomeNotFoundRedirect                // root or unknown key, to the domain's notFoundURL
	outcomeNotFound                        // unknown host, or unknown key without notFoundURL
	outcomeExpiredRedirect                 // to the link's or the domain's expiry target
	outcomeGone                            // expired without a target
	outcomePasswordForm                    // the form (no click)
	outcomePasswordWrong                   // a wrong password
	outcomeRateLimited                     // too many password attempts (client or link)
	outcomePasswordBusy                    // no password check slot freed up in time
	outcomeBadMethod                       // neither GET, HEAD nor POST
	numOutcomes
)

var outcomeNames = [numOutcomes]string{
	"redirect", "not_found_redirect", "not_found", "expired_redirect", "gone",
	"password_form", "password_wrong", "password_rate_limited", "password_busy",
	"method_not_allowed",
}

var (
	redirectRequests = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "kurz_redirect_requests_total",
		Help: "Redirect server requests by outcome.",
	}, []string{"outcome"})
	lookupSeconds = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name:    "kurz_redirect_lookup_duration_seconds",
		Help:    "Time to answer a redirect request, from parsed request to written response headers (network excluded).",
		Buckets: prometheus.ExponentialBuckets(1e-6, 4, 10), // 1µs .. ~0.26s
	})
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

	// outcomeCounters resolves each label once, so the hot path is one
	// atomic add.
	outcomeCounters [numOutcomes]prometheus.Counter

	registerOnce sync.Once
)

// Reasons clicks are dropped, the label of kurz_redirect_clicks_dropped_total.
const (
	reasonSpoolFull = "spool_full"
	reasonRefused   = "refused"
)

func init() {
	for i, name := range outcomeNames {
		outcomeCounters[i] = redirectRequests.WithLabelValues(name)
	}
	// Present (at 0) before the first drop, so a rate() has a start.
	for _, r := range []string{reasonSpoolFull, reasonRefused} {
		clicksDropped.WithLabelValues(r)
	}
}

// registerMetrics adds the collectors to controller-runtime's registry, once
// per process (tests run several managers in one).
func registerMetrics() {
	registerOnce.Do(func() {
		metrics.Registry.MustRegister(redirectRequests, lookupSeconds, flushWrites, flushFailures, clicksDropped, pendingClicks)
	})
}
