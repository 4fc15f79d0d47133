package wiring

import (
	"testing"
	"time"

	. "github.com/onsi/gomega"

	"github.com/kurz-dev/kurz/internal/optionstest"
)

func enabled() Options {
	o := DefaultOptions()
	o.Enabled, o.Store = true, "/tmp/analytics.db"
	return o
}

func TestOptionsValidate(t *testing.T) {
	optionstest.Validate(t, DefaultOptions, []optionstest.Case[Options]{
		{Name: "off checks nothing", Edit: func(o *Options) { o.CountryHeader = "bad header" }, Error: ""},
		{Name: "on without a store", Edit: func(o *Options) { o.Enabled = true }, Error: "--analytics-store"},
		{Name: "postgres", Edit: func(o *Options) { *o = enabled(); o.Store = "postgres://kurz:pw@db/kurz" }, Error: ""},
		{Name: "postgresql", Edit: func(o *Options) { *o = enabled(); o.Store = "postgresql://db/kurz?sslmode=require" }, Error: ""},
		{Name: "postgres short retention", Edit: func(o *Options) { *o = enabled(); o.Store = "postgres://db/kurz"; o.SQLite.Retention = time.Hour }, Error: "--analytics-retention"},
		{Name: "another scheme", Edit: func(o *Options) { *o = enabled(); o.Store = "mysql://u:pw@db/kurz" }, Error: "--analytics-store"},
		{Name: "a directory", Edit: func(o *Options) { *o = enabled(); o.Store = t.TempDir() }, Error: "--analytics-store"},
		{Name: "bad country header", Edit: func(o *Options) { *o = enabled(); o.CountryHeader = "CF IPCountry" }, Error: "--analytics-country-header"},
		{Name: "short retention", Edit: func(o *Options) { *o = enabled(); o.SQLite.Retention = time.Hour }, Error: "--analytics-retention"},
		{Name: "valid", Edit: func(o *Options) { *o = enabled(); o.CountryHeader = "CF-IPCountry" }, Error: ""},
		{Name: "otlp alone", Edit: func(o *Options) { o.Enabled, o.OTLP.Endpoint = true, "http://collector:4318" }, Error: ""},
		{Name: "otlp not http", Edit: func(o *Options) { *o = enabled(); o.OTLP.Endpoint = "grpc://collector:4317" }, Error: "--analytics-otlp-endpoint"},
		{Name: "otlp timeout", Edit: func(o *Options) { *o = enabled(); o.OTLP.Endpoint = "http://c:4318"; o.OTLP.Timeout = 0 }, Error: "--analytics-otlp-timeout"},
		{Name: "geoip missing", Edit: func(o *Options) { *o = enabled(); o.GeoIP.Database = "/nonexistent/x.mmdb" }, Error: "--geoip-database"},
		{Name: "geoip a directory", Edit: func(o *Options) { *o = enabled(); o.GeoIP.Database = t.TempDir() }, Error: "--geoip-database"},
		{Name: "geoip reload", Edit: func(o *Options) {
			*o = enabled()
			o.GeoIP.Database = "/nonexistent/x.mmdb"
			o.GeoIP.ReloadInterval = time.Millisecond
		}, Error: "--geoip-reload-interval"},
	})
}

// Every bad option is reported, not only the first.
func TestOptionsValidateJoins(t *testing.T) {
	g := NewWithT(t)
	o := enabled()
	o.CountryHeader, o.SQLite.Retention = "a b", time.Hour
	o.OTLP.Endpoint, o.GeoIP.Database = "ftp://c", "/nonexistent/x.mmdb"
	err := o.Validate()
	for _, flag := range []string{"--analytics-country-header", "--analytics-retention", "--analytics-otlp-endpoint", "--geoip-database"} {
		g.Expect(err).To(MatchError(ContainSubstring(flag)))
	}
	optionstest.ExpectEachOnce(g, err)
}

// A store URL's password is in no validation message.
func TestOptionsValidateHidesPassword(t *testing.T) {
	g := NewWithT(t)
	for _, store := range []string{"postgres://kurz:s3cret-pw@db/kurz", "mysql://kurz:s3cret-pw@db/kurz"} {
		o := enabled()
		o.Store, o.SQLite.Retention = store, time.Hour
		err := o.Validate()
		g.Expect(err).To(HaveOccurred())
		g.Expect(err.Error()).NotTo(ContainSubstring("s3cret-pw"))
		g.Expect(o.storeName()).NotTo(ContainSubstring("s3cret-pw"))
	}
}

// The store comes from KURZ_ANALYTICS_STORE when the flag is not given
// (the chart's Secret), and turns analytics on; the flag wins.
func TestStoreFromEnv(t *testing.T) {
	g := NewWithT(t)
	t.Setenv(StoreEnv, "postgres://kurz:pw@db/kurz")
	o := DefaultOptions()
	g.Expect(optionstest.Parse(&o)).To(Succeed())
	o.Complete()
	g.Expect(o.Enabled).To(BeTrue())
	g.Expect(o.Store).To(Equal("postgres://kurz:pw@db/kurz"))

	o = DefaultOptions()
	g.Expect(optionstest.Parse(&o, "--analytics-store=/x.db")).To(Succeed())
	o.Complete()
	g.Expect(o.Store).To(Equal("/x.db"))
}

// A store given alone turns analytics on; --analytics=false still wins;
// kurz dev's default is on, in its data dir, unless flags say otherwise.
func TestEnabledDefaults(t *testing.T) {
	for _, tt := range []struct {
		name string
		args []string
		dev  bool
		on   bool
	}{
		{"manager: off", nil, false, false},
		{"manager: a store turns it on", []string{"--analytics-store=/x.db"}, false, true},
		{"manager: false wins over a store", []string{"--analytics-store=/x.db", "--analytics=false"}, false, false},
		{"manager: an OTLP endpoint turns it on", []string{"--analytics-otlp-endpoint=http://c:4318"}, false, true},
		{"dev: on", nil, true, true},
		{"dev: off", []string{"--analytics=false"}, true, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			o := DefaultOptions()
			g.Expect(optionstest.Parse(&o, tt.args...)).To(Succeed())
			if tt.dev {
				o.SetDefaultEnabled("/data/analytics.db")
			}
			o.Complete()
			g.Expect(o.Enabled).To(Equal(tt.on))
			if tt.dev && tt.on {
				g.Expect(o.Store).To(Equal("/data/analytics.db"))
			}
		})
	}
}
