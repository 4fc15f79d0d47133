// Package gauges holds kurz's metrics that are read rather than counted:
// kurz_build_info, and the Links and Domains by state, computed from the
// informer cache when Prometheus scrapes (so they are right after deletes
// and restarts, and cost nothing between scrapes). Register adds them to
// controller-runtime's registry, which the manager's metrics server serves.
package gauges
