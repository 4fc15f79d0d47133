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
		Help:    "Time to answer a redirect request, from its first bytes read to its response headers written (network excluded).",
		Buckets: prometheus.ExponentialBuckets(1e-6, 4, 10), // 1µs .. ~0.26s
	})
	// outcomeCounters resolves each label once, so the hot path is one
	// atomic add.
	outcomeCounters [numOutcomes]prometheus.Counter

	registerOnce sync.Once
)

func init() {
	for i, name := range outcomeNames {
		outcomeCounters[i] = redirectRequests.WithLabelValues(name)
	}
}

// registerMetrics adds the collectors to controller-runtime's registry, once
// per process (tests run several managers in one).
func registerMetrics() {
	registerOnce.Do(func() {
		metrics.Registry.MustRegister(redirectRequests, lookupSeconds)
	})
}
