package restapi

import (
	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
)

// Served on the manager's metrics endpoint. Routes are the mux patterns
// ("GET /api/v1/links/{id}"), so ids never become label values.
var (
	requestsTotal = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "kurz_api_requests_total",
		Help: "Requests to the /api/v1 server by route pattern and status code.",
	}, []string{"route", "code"})
	requestDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "kurz_api_request_duration_seconds",
		Help:    "Latency of /api/v1 requests by route pattern.",
		Buckets: []float64{0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10},
	}, []string{"route"})
	// authReviews counts the TokenReviews and SubjectAccessReviews this
	// replica asked kube-apiserver for: each one a request waited on.
	authReviews = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "kurz_api_auth_reviews_total",
		Help: "TokenReviews (review=token) and SubjectAccessReviews (review=access) the /api/v1 server asked kube-apiserver for, by result (ok, error).",
	}, []string{"review", "result"})
)

// routeUnmatched labels requests no route matched (404 and 405).
const routeUnmatched = "unmatched"

func init() {
	metrics.Registry.MustRegister(requestsTotal, requestDuration, authReviews)
}
