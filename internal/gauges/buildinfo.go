package gauges

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/kurz-dev/kurz/internal/version"
)

// buildInfo is the usual *_build_info gauge: always 1, the build in its
// labels, so dashboards can join it to other series or count versions
// during a rollout.
func buildInfo(i version.Info) prometheus.Collector {
	g := prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "kurz_build_info",
		Help: "The running kurz build (always 1): release, commit and Go version.",
	}, []string{"version", "commit", "goversion"})
	g.WithLabelValues(i.Version, i.Commit, i.GoVersion).Set(1)
	return g
}
