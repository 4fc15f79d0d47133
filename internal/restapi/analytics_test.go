package restapi

import (
	"net/http"
	"testing"

	. "github.com/onsi/gomega"

	"github.com/kurz-dev/kurz/internal/testenv"
)

// Without an analytics store (this suite's baseURL server) the analytics
// endpoints answer 503 saying so; a link of another workspace is 404 first,
// as every link route answers it. (The answers with a store: test/e2e's
// TestAnalytics on a real kurz dev, and the console's TestConsoleAnalytics
// on analyticsURL.)
func TestAnalyticsWithoutStore(t *testing.T) {
	testenv.Need(t)
	g := NewWithT(t)
	w, host := newWorkspaceWithDomain(t)
	l := w.createLink(t, map[string]any{"domain": host, "key": "a", "url": "https://example.com/"})
	id := l["id"].(string)
	for _, path := range []string{"/api/v1/links/" + id + "/analytics", "/api/v1/analytics?group_by=link"} {
		r := w.viewer.do("GET", path, nil)
		g.Expect(r.status).To(Equal(http.StatusServiceUnavailable), "%s", r)
		g.Expect(r.body["message"]).To(And(ContainSubstring("No analytics store is configured"), ContainSubstring("--analytics-store")))
	}
	other := newWorkspace(t)
	r := other.viewer.do("GET", "/api/v1/links/"+id+"/analytics", nil)
	g.Expect(r.status).To(Equal(http.StatusNotFound), "%s", r)
}
