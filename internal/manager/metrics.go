package manager

import (
	"crypto/tls"

	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
)

// metricsOptions configure the /metrics server as kubebuilder v4 scaffolds
// it. Secure: HTTPS, and each request's bearer token is checked with a
// TokenReview and a SubjectAccessReview (get on the non-resource URL
// /metrics) against kube-apiserver, so metrics are readable by exactly the
// subjects RBAC lets read them (ClusterRole kurz-metrics-reader); the
// manager needs ClusterRole kurz-metrics-auth-role for the reviews.
func metricsOptions(o Options) metricsserver.Options {
	if !o.MetricsSecure {
		return metricsserver.Options{BindAddress: o.MetricsBindAddress}
	}
	return metricsserver.Options{
		BindAddress:    o.MetricsBindAddress,
		SecureServing:  true,
		FilterProvider: metricsAuth,
		// Without a directory, controller-runtime makes a self-signed
		// certificate; with one, it watches and reloads the files (Validate
		// made sure they exist, since it would otherwise fall back silently).
		CertDir:  o.MetricsCertPath,
		CertName: o.MetricsCertName,
		KeyName:  o.MetricsCertKey,
		TLSOpts:  []func(*tls.Config){disableHTTP2},
	}
}

// disableHTTP2 serves HTTP/1.1 only, as kubebuilder does by default: HTTP/2
// stream cancellation and rapid reset (CVE-2023-44487, CVE-2023-39325) let a
// client that needs no token tie up the server. A scraper loses nothing.
func disableHTTP2(c *tls.Config) { c.NextProtos = []string{"http/1.1"} }
