// Package gauges holds kurz's metrics that are read rather than counted:
// kurz_build_info, and the Links and Domains by state, counted from the
// informer cache's events (so they are right after deletes and restarts; a
// scrape reads the counts and allocates nothing per object). Register adds
// them to controller-runtime's registry, which the manager's metrics server
// serves.
package gauges
