package restapi

import (
	"net/http"
	"testing"

	"github.com/kurz-dev/kurz/internal/testenv"

	. "github.com/onsi/gomega"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
)

// counterValue returns kurz_api_requests_total{route, code}.
func counterValue(t *testing.T, route, code string) float64 {
	families, err := metrics.Registry.Gather()
	NewWithT(t).Expect(err).NotTo(HaveOccurred())
	for _, f := range families {
		if f.GetName() != "kurz_api_requests_total" {
			continue
		}
		for _, m := range f.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			if labels["route"] == route && labels["code"] == code {
				return m.GetCounter().GetValue()
			}
		}
	}
	return 0
}

func TestMetrics(t *testing.T) {
	testenv.Need(t)
	g := NewWithT(t)
	w := newWorkspace(t)
	before := counterValue(t, "GET /api/v1/links/{id}", "404")
	unmatched := counterValue(t, routeUnmatched, "404")
	g.Expect(w.viewer.do("GET", "/api/v1/links/nope", nil).status).To(Equal(http.StatusNotFound))
	g.Expect(w.viewer.do("GET", "/api/v1/nope", nil).status).To(Equal(http.StatusNotFound))
	g.Expect(counterValue(t, "GET /api/v1/links/{id}", "404")).To(Equal(before + 1))
	g.Expect(counterValue(t, routeUnmatched, "404")).To(Equal(unmatched + 1))

	families, err := metrics.Registry.Gather()
	g.Expect(err).NotTo(HaveOccurred())
	var names []string
	for _, f := range families {
		names = append(names, f.GetName())
	}
	g.Expect(names).To(ContainElement("kurz_api_request_duration_seconds"))
}
