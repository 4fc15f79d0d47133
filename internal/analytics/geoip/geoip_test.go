package geoip

import (
	"context"
	"net/netip"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	. "github.com/onsi/gomega"

	"github.com/kurz-dev/kurz/internal/analytics/geoip/geoiptest"
)

// network is one network of a test database and what it maps to.
func network(cidr, country, city string) geoiptest.Network {
	return geoiptest.Network{CIDR: cidr, Country: country, City: city}
}

// write writes a test database of nets to path (geoiptest.Write).
func write(t *testing.T, path string, nets ...geoiptest.Network) { geoiptest.Write(t, path, nets...) }

func ip(s string) netip.Addr { return netip.MustParseAddr(s) }

func TestLookupCountryAndCity(t *testing.T) {
	g := NewWithT(t)
	path := filepath.Join(t.TempDir(), "geo.mmdb")
	write(t, path, network("81.2.69.0/24", "GB", "London"), network("2001:db8::/32", "DE", ""), network("198.51.100.0/24", "xx", ""))
	db, err := Open(path)
	g.Expect(err).NotTo(HaveOccurred())
	for _, c := range []struct {
		addr, country, city string
	}{
		{"81.2.69.142", "GB", "London"},
		{"::ffff:81.2.69.142", "GB", "London"}, // IPv4-mapped, as a dual-stack listener sees it
		{"2001:db8::1", "DE", ""},              // a country-only network
		{"203.0.113.9", "", ""},                // not in the file
		{"198.51.100.1", "", ""},               // not an ISO code
	} {
		country, city := db.Lookup(ip(c.addr))
		g.Expect([]string{country, city}).To(Equal([]string{c.country, c.city}), c.addr)
	}
	country, city := db.Lookup(netip.Addr{})
	g.Expect(country + city).To(BeEmpty())
}

func TestOpenRefusesAMissingOrForeignFile(t *testing.T) {
	g := NewWithT(t)
	dir := t.TempDir()
	_, err := Open(filepath.Join(dir, "none.mmdb"))
	g.Expect(err).To(MatchError(ContainSubstring("--geoip-database")))
	g.Expect(os.IsNotExist(errorsUnwrapAll(err))).To(BeTrue())
	bad := filepath.Join(dir, "bad.mmdb")
	g.Expect(os.WriteFile(bad, []byte("not a database"), 0o600)).To(Succeed())
	_, err = Open(bad)
	g.Expect(err).To(MatchError(ContainSubstring("not a MaxMind database")))
}

func errorsUnwrapAll(err error) error {
	for {
		u, ok := err.(interface{ Unwrap() error })
		if !ok || u.Unwrap() == nil {
			return err
		}
		err = u.Unwrap()
	}
}

func TestReloadOnChangeKeepsTheOldVersionOnABadFile(t *testing.T) {
	g := NewWithT(t)
	path := filepath.Join(t.TempDir(), "geo.mmdb")
	write(t, path, network("81.2.69.0/24", "GB", "London"))
	db, err := Open(path)
	g.Expect(err).NotTo(HaveOccurred())

	ok, err := db.Reload()
	g.Expect(ok, err).To(BeFalse(), "unchanged file: not loaded again")

	write(t, path, network("81.2.69.0/24", "FR", "Paris"))
	ok, err = db.Reload()
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(ok).To(BeTrue())
	country, city := db.Lookup(ip("81.2.69.1"))
	g.Expect([]string{country, city}).To(Equal([]string{"FR", "Paris"}))

	// A half-copied update: the previous version keeps answering.
	g.Expect(os.WriteFile(path+".tmp", []byte("\xab\xcd\xefMaxMind.com truncated"), 0o600)).To(Succeed())
	g.Expect(os.Rename(path+".tmp", path)).To(Succeed())
	ok, err = db.Reload()
	g.Expect(err).To(MatchError(ContainSubstring("not a MaxMind database")))
	g.Expect(ok).To(BeFalse())
	country, _ = db.Lookup(ip("81.2.69.1"))
	g.Expect(country).To(Equal("FR"))
	ok, err = db.Reload()
	g.Expect(ok, err).To(BeFalse(), "the bad file is not retried until it changes")
}

func TestRunPicksUpASymlinkSwap(t *testing.T) {
	// A ConfigMap or Secret volume: the file is a symlink through ..data,
	// which the kubelet points at a new directory.
	g := NewWithT(t)
	dir := t.TempDir()
	for _, v := range []string{"v1", "v2"} {
		g.Expect(os.Mkdir(filepath.Join(dir, v), 0o755)).To(Succeed())
	}
	write(t, filepath.Join(dir, "v1", "geo.mmdb"), network("81.2.69.0/24", "GB", "London"))
	write(t, filepath.Join(dir, "v2", "geo.mmdb"), network("81.2.69.0/24", "JP", "Tokyo"))
	g.Expect(os.Symlink("v1", filepath.Join(dir, "..data"))).To(Succeed())
	path := filepath.Join(dir, "geo.mmdb")
	g.Expect(os.Symlink("..data/geo.mmdb", path)).To(Succeed())
	db, err := Open(path)
	g.Expect(err).NotTo(HaveOccurred())

	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	var mu sync.Mutex
	var reports []error
	wg.Add(1)
	go func() {
		defer wg.Done()
		db.Run(ctx, 10*time.Millisecond, func(err error) { mu.Lock(); reports = append(reports, err); mu.Unlock() })
	}()
	t.Cleanup(func() { cancel(); wg.Wait() })

	g.Expect(os.Symlink("v2", filepath.Join(dir, "..data_tmp"))).To(Succeed())
	g.Expect(os.Rename(filepath.Join(dir, "..data_tmp"), filepath.Join(dir, "..data"))).To(Succeed())
	g.Eventually(func() string { c, _ := db.Lookup(ip("81.2.69.1")); return c }).Should(Equal("JP"))
	mu.Lock()
	g.Expect(reports).To(Equal([]error{nil}))
	mu.Unlock()
}

func TestOptions(t *testing.T) {
	g := NewWithT(t)
	o := DefaultOptions()
	g.Expect(o.Validate()).To(Succeed())
	o.ReloadInterval = time.Millisecond
	g.Expect(o.Validate()).To(MatchError(ContainSubstring("--geoip-reload-interval 1ms: at least 1s")))
}
