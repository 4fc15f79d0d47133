// Package geoiptest writes small MaxMind-format databases for tests: none
// can be downloaded here, and a real GeoLite2 file has a licence of its
// own. The files are what `--geoip-database` reads (type GeoIP2-City,
// countries by ISO code, cities by name in English and in German, so a
// reader that took the wrong language shows).
package geoiptest

import (
	"net"
	"os"
	"testing"

	"github.com/maxmind/mmdbwriter"
	"github.com/maxmind/mmdbwriter/mmdbtype"
)

// Network is one network of a test database: a CIDR, its ISO 3166-1
// country and, unless empty, its city's English name.
type Network struct {
	CIDR, Country, City string
}

// Write writes a database of nets to path through a temporary file renamed
// over it, as geoipupdate replaces a file.
func Write(t testing.TB, path string, nets ...Network) {
	t.Helper()
	tree, err := mmdbwriter.New(mmdbwriter.Options{DatabaseType: "GeoIP2-City", RecordSize: 24, IncludeReservedNetworks: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range nets {
		_, ipnet, err := net.ParseCIDR(n.CIDR)
		if err != nil {
			t.Fatal(err)
		}
		rec := mmdbtype.Map{"country": mmdbtype.Map{"iso_code": mmdbtype.String(n.Country)}}
		if n.City != "" {
			rec["city"] = mmdbtype.Map{"names": mmdbtype.Map{"en": mmdbtype.String(n.City), "de": mmdbtype.String(n.City + " (de)")}}
		}
		if err := tree.Insert(ipnet, rec); err != nil {
			t.Fatal(err)
		}
	}
	tmp := path + ".tmp"
	f, err := os.Create(tmp)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tree.WriteTo(f); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}
