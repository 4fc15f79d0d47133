package e2e

import (
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	. "github.com/onsi/gomega"

	"github.com/kurz-dev/kurz/internal/analytics/geoip/geoiptest"
	"github.com/kurz-dev/kurz/internal/testenv"
)

// TestAnalyticsGeoIPCity runs kurz dev with a GeoIP City file the test
// writes (loopback, where the clicks come from, is in Berlin) and the
// trusted country header: the clicks without the header have the file's
// country and city, which the analytics API answers as a dimension
// (group_by=city, the city filter, CSV); a click with the header has its
// country and no city.
func TestAnalyticsGeoIPCity(t *testing.T) {
	g := NewWithT(t)
	dir := t.TempDir()
	mmdb := filepath.Join(dir, "GeoLite2-City.mmdb")
	geoiptest.Write(t, mmdb, geoiptest.Network{CIDR: "127.0.0.0/8", Country: "DE", City: "Berlin"},
		geoiptest.Network{CIDR: "::1/128", Country: "DE", City: "Berlin"})

	k := startKurzDev(t, filepath.Join(dir, "data"), testenv.FreeAddr(t), testenv.FreeAddr(t),
		"--analytics-country-header", "CF-IPCountry", "--geoip-database", mmdb)
	t.Cleanup(func() { _ = k.stop(t, syscall.SIGTERM) })
	k.must(t, http.StatusCreated, http.MethodPost, "/api/v1/domains", map[string]any{"domain": "geo.e2e.example"})
	l := k.must(t, http.StatusCreated, http.MethodPost, "/api/v1/links", map[string]any{
		"domain": "geo.e2e.example", "key": "city", "url": "https://shop.example/",
	})
	k.visit(t, "geo.e2e.example", "city", "", desktopUA, "", "")
	k.visit(t, "geo.e2e.example", "city", "", desktopUA, "", "")
	k.visit(t, "geo.e2e.example", "city", "", phoneUA, "", "FR") // the header wins: France, no city

	base := "/api/v1/links/" + l["id"].(string) + "/analytics?interval=24h"
	g.Eventually(func() map[string]float64 { return k.rows(t, base+"&group_by=city") }).
		WithTimeout(100*time.Second).WithPolling(time.Second).
		Should(Equal(map[string]float64{"DE/Berlin": 2, "": 1}), "log:\n%s", k.log)
	g.Expect(k.rows(t, base+"&group_by=country")).To(Equal(map[string]float64{"DE": 2, "FR": 1}))
	g.Expect(k.rows(t, base+"&group_by=device&city=DE/Berlin")).To(Equal(map[string]float64{"desktop": 2}))
	g.Expect(k.rows(t, "/api/v1/analytics?interval=24h&group_by=city&city=DE/Berlin")).To(Equal(map[string]float64{"DE/Berlin": 2}))

	req := k.request(t, http.MethodGet, base+"&group_by=city", nil)
	req.Header.Set("Accept", "text/csv")
	resp, err := http.DefaultClient.Do(req)
	g.Expect(err).NotTo(HaveOccurred())
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	g.Expect(strings.Split(strings.TrimSpace(string(body)), "\n")).To(ConsistOf("key,clicks,visitors", "DE/Berlin,2,1", ",1,1"))
}
