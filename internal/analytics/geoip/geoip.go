package geoip

import (
	"context"
	"flag"
	"fmt"
	"net/netip"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/oschwald/maxminddb-golang/v2"

	"github.com/kurz-dev/kurz/internal/flagbind"
)

// Options configure the GeoIP database. Start from DefaultOptions.
type Options struct {
	// Database is the .mmdb file's path; empty: no GeoIP lookups.
	Database string `flag:"geoip-database" usage:"MaxMind-format .mmdb file (GeoLite2/GeoIP2 Country or City, DB-IP) giving analytics the country (and city) of a client address; reloaded when it changes. A trusted --analytics-country-header wins. Empty: no lookups."`
	// ReloadInterval is how often the file's stat is checked for a change.
	ReloadInterval time.Duration `flag:"geoip-reload-interval" usage:"How often --geoip-database is checked for a new version."`
}

// DefaultOptions returns every default.
func DefaultOptions() Options { return Options{ReloadInterval: time.Minute} }

// BindFlags registers --geoip-database and --geoip-reload-interval.
func (o *Options) BindFlags(fs *flag.FlagSet) { flagbind.Fields(fs, o) }

// Validate refuses options Open cannot work with, naming the flag (the
// file itself is checked by Open).
func (o Options) Validate() error {
	if o.ReloadInterval < time.Second {
		return fmt.Errorf("--geoip-reload-interval %s: at least 1s", o.ReloadInterval)
	}
	return nil
}

// DB is a GeoIP database that reloads itself. Lookup is safe for
// concurrent use, also during a reload.
type DB struct {
	path string
	cur  atomic.Pointer[maxminddb.Reader]

	mu   sync.Mutex // serialises Reload
	seen os.FileInfo
}

// Open loads the file at path; it fails if the file cannot be read or is
// not a MaxMind database.
func Open(path string) (*DB, error) {
	d := &DB{path: path}
	if _, err := d.Reload(); err != nil {
		return nil, err
	}
	return d, nil
}

type record struct {
	Country struct {
		ISOCode string `maxminddb:"iso_code"`
	} `maxminddb:"country"`
	City struct {
		Names struct {
			En string `maxminddb:"en"`
		} `maxminddb:"names"`
	} `maxminddb:"city"`
}

// Lookup is the country (ISO 3166-1 alpha-2, upper case) and city
// (English name) of addr; "" for what the database does not know.
func (d *DB) Lookup(addr netip.Addr) (country, city string) {
	r := d.cur.Load()
	if r == nil || !addr.IsValid() {
		return "", ""
	}
	var rec record
	if err := r.Lookup(addr.Unmap()).Decode(&rec); err != nil {
		return "", ""
	}
	c := rec.Country.ISOCode
	if len(c) != 2 || c[0] < 'A' || c[0] > 'Z' || c[1] < 'A' || c[1] > 'Z' {
		c = ""
	}
	return c, rec.City.Names.En
}

// Reload loads the file again if it changed since the last load or
// attempt; whether it loaded a new version. On error the previous
// version keeps answering.
func (d *DB) Reload() (bool, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	fi, err := os.Stat(d.path)
	if err != nil {
		return false, fmt.Errorf("--geoip-database: %w", err)
	}
	if d.seen != nil && os.SameFile(fi, d.seen) && fi.Size() == d.seen.Size() && fi.ModTime().Equal(d.seen.ModTime()) {
		return false, nil
	}
	d.seen = fi // a file that fails is tried again once it changes
	data, err := os.ReadFile(d.path)
	if err != nil {
		return false, fmt.Errorf("--geoip-database: %w", err)
	}
	r, err := maxminddb.OpenBytes(data)
	if err != nil {
		return false, fmt.Errorf("--geoip-database %s: not a MaxMind database: %w", d.path, err)
	}
	// Not r.Verify(): it refuses files real producers write (an empty
	// description), and a record that fails to decode answers "" anyway.
	d.cur.Store(r)
	return true, nil
}

// Run reloads the file when it changes, checking every interval, until
// ctx ends; report gets each failed reload (the previous version still
// answers) and each successful one (err nil).
func (d *DB) Run(ctx context.Context, interval time.Duration, report func(error)) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if ok, err := d.Reload(); ok || err != nil {
			if report != nil {
				report(err)
			}
		}
	}
}
