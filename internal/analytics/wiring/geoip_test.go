package wiring

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	. "github.com/onsi/gomega"

	"github.com/kurz-dev/kurz/internal/analytics"
	"github.com/kurz-dev/kurz/internal/analytics/geoip/geoiptest"
)

// writeMMDB writes a City-type database mapping each CIDR to a country,
// through a file renamed over path (as geoipupdate does).
func writeMMDB(t *testing.T, path string, countries map[string]string) {
	t.Helper()
	nets := make([]geoiptest.Network, 0, len(countries))
	for cidr, country := range countries {
		nets = append(nets, geoiptest.Network{CIDR: cidr, Country: country})
	}
	geoiptest.Write(t, path, nets...)
}

// countries records the country of every event the consumer makes.
type countries struct {
	mu  sync.Mutex
	got []string
}

func (c *countries) Clicked(e *analytics.Event) {
	c.mu.Lock()
	c.got = append(c.got, e.Country)
	c.mu.Unlock()
}

func (c *countries) take() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := c.got
	c.got = nil
	return out
}

// --geoip-database gives the consumer the country of an address the
// trusted header did not give (the header wins); a new file is picked up,
// a broken one is logged and counted and the previous version answers.
func TestGeoIPThroughTheConsumer(t *testing.T) {
	g := NewWithT(t)
	path := filepath.Join(t.TempDir(), "GeoLite2-City.mmdb")
	writeMMDB(t, path, map[string]string{"192.0.2.0/24": "FR", "2001:db8::/32": "JP"})
	o := testOptions(filepath.Join(t.TempDir(), "analytics.db"))
	o.GeoIP.Database = path
	rec := &countries{}
	s := newStack(t, o, rec)
	link := &testLink{analytics.LinkRef{UID: "uid-g", Namespace: "geo", Name: "g", Domain: "go.example", Key: "g"}}
	clickAll := func() []string {
		for _, c := range []struct{ ip, header string }{
			{"192.0.2.10", ""},        // from the file
			{"192.0.2.11", "de"},      // the trusted header wins
			{"2001:db8::1", ""},       // IPv6
			{"198.51.100.1", ""},      // not in the file: unknown
			{"::ffff:192.0.2.12", ""}, // IPv4-mapped
		} {
			g.Expect(s.click(link, c.ip, c.header, "")).To(BeTrue())
		}
		s.c.Drain()
		return rec.take()
	}
	g.Expect(clickAll()).To(Equal([]string{"FR", "DE", "JP", "", "FR"}))

	// The reloader, as Setup adds it, with a short interval.
	g.Expect(s.geo).NotTo(BeNil())
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { _ = (&geoReloader{db: s.geo, every: 10 * time.Millisecond}).Start(ctx) }()

	writeMMDB(t, path, map[string]string{"192.0.2.0/24": "IT"})
	g.Eventually(clickAll).Should(Equal([]string{"IT", "DE", "", "", "IT"}), "the new file answers")

	errs := func() float64 { return metricSum(g, "kurz_analytics_geoip_reload_errors_total", nil) }
	before := errs()
	g.Expect(os.WriteFile(path+".tmp", []byte("not a MaxMind database"), 0o600)).To(Succeed())
	g.Expect(os.Rename(path+".tmp", path)).To(Succeed())
	g.Eventually(errs).Should(BeNumerically(">", before), "the failed reload is counted")
	g.Expect(clickAll()).To(Equal([]string{"IT", "DE", "", "", "IT"}), "the previous version keeps answering")
}
