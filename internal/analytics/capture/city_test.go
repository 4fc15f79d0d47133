package capture

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	. "github.com/onsi/gomega"

	"github.com/kurz-dev/kurz/internal/analytics"
	"github.com/kurz-dev/kurz/internal/analytics/geoip"
	"github.com/kurz-dev/kurz/internal/analytics/geoip/geoiptest"
)

// cityDB writes a City-type database mapping each network of nets to a
// country and an English city name ([2]string), and opens it.
func cityDB(t *testing.T, nets map[string][2]string) *geoip.DB {
	t.Helper()
	list := make([]geoiptest.Network, 0, len(nets))
	for cidr, v := range nets {
		list = append(list, geoiptest.Network{CIDR: cidr, Country: v[0], City: v[1]})
	}
	path := filepath.Join(t.TempDir(), "GeoIP2-City.mmdb")
	geoiptest.Write(t, path, list...)
	db, err := geoip.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	return db
}

// The city comes from the GeoIP file with the file's country, keyed by
// it (two cities of one name are two values), in English; a trusted
// country header gives the country and no city; a name the API could not
// filter on (a comma) is no city.
func TestConsumerCityFromGeoIP(t *testing.T) {
	g := NewWithT(t)
	now := time.Now().UTC().Truncate(time.Minute)
	c, ring, w := newRecordingConsumer(t, now)
	rec := &recorder{}
	c.sinks = append(c.sinks, rec)
	c.SetGeoIP(cityDB(t, map[string][2]string{
		"192.0.2.1/32":    {"FR", "Paris"},
		"192.0.2.2/32":    {"US", "Paris"},
		"192.0.2.3/32":    {"DE", ""},
		"192.0.2.4/32":    {"US", "Washington, D.C."},
		"2001:db8::1/128": {"JP", "Tokyo"},
	}))
	l := &testLink{ref: analytics.LinkRef{UID: "u", Namespace: "ns"}, dest: "https://shop.example/"}
	for _, k := range []struct{ ip, header string }{
		{"192.0.2.1", ""}, {"192.0.2.2", ""}, {"192.0.2.3", ""}, {"192.0.2.4", ""}, {"2001:db8::1", ""},
		{"192.0.2.1", "DE"}, // the header wins, and says nothing of the city
		{"203.0.113.1", ""}, // not in the file
	} {
		g.Expect(put(ring, l, now, k.ip, desktopUA, "", "", k.header)).To(BeTrue())
	}
	c.Drain()
	var got [][2]string
	for _, e := range rec.events {
		got = append(got, [2]string{e.Country, e.City})
	}
	g.Expect(got).To(Equal([][2]string{
		{"FR", "FR/Paris"}, {"US", "US/Paris"}, {"DE", ""}, {"US", ""}, {"JP", "JP/Tokyo"}, {"DE", ""}, {"", ""},
	}))
	g.Expect(c.Finish(context.Background())).To(Succeed())
	cities := map[string]int64{}
	for _, e := range w.events() {
		g.Expect(e.Validate()).To(Succeed())
		cities[e.City] += e.Clicks
	}
	g.Expect(cities).To(Equal(map[string]int64{"FR/Paris": 1, "US/Paris": 1, "JP/Tokyo": 1, "": 4}))
}

// A flood of clicks from addresses of distinct cities (more than the
// interned values' bound) keeps the consumer's tables within it: cities
// are interned values like referrers, and the tables start over.
func TestConsumerCityFloodIsBounded(t *testing.T) {
	g := NewWithT(t)
	now := time.Now().UTC().Truncate(time.Minute)
	c, ring, w := newRecordingConsumer(t, now)
	n := internMax + 100
	nets := map[string][2]string{}
	for i := range n {
		nets[fmt.Sprintf("10.%d.%d.%d/32", i>>16&255, i>>8&255, i&255)] = [2]string{"DE", fmt.Sprintf("Stadt %d", i)}
	}
	c.SetGeoIP(cityDB(t, nets))
	l := &testLink{ref: analytics.LinkRef{UID: "u", Namespace: "ns"}, dest: "https://shop.example/"}
	most := 0
	for i := range n {
		for !put(ring, l, now, fmt.Sprintf("10.%d.%d.%d", i>>16&255, i>>8&255, i&255), desktopUA, "", "", "") {
			c.Drain()
			most = max(most, len(c.t.strs))
		}
	}
	c.Drain()
	most = max(most, len(c.t.strs))
	g.Expect(c.ev.City).To(Equal(fmt.Sprintf("DE/Stadt %d", n-1)))
	g.Expect(most).To(BeNumerically("<=", internMax), "the interned values stay within their bound")
	g.Expect(c.Finish(context.Background())).To(Succeed())
	cities := map[string]bool{}
	for _, e := range w.events() {
		cities[e.City] = true
	}
	g.Expect(cities).To(HaveLen(n), "every city's click is written")
}
