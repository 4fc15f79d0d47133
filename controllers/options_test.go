package controllers_test

import (
	"testing"
	"time"

	. "github.com/onsi/gomega"

	"github.com/kurz-dev/kurz/controllers"
	"github.com/kurz-dev/kurz/internal/optionstest"
	"github.com/kurz-dev/kurz/internal/testenv"
)

func TestBindFlags(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want func(*controllers.Options)
	}{
		{"defaults", nil, func(*controllers.Options) {}},
		{"every flag", []string{
			"--dns-server", "127.0.0.1:5353",
			"--redirect-target", "lb.example.com", "--redirect-target", "192.0.2.1, 2001:db8::1",
			"--dns-recheck-interval", "5m",
			"--dns-pending-backoff", "1s", "--dns-pending-backoff-max", "1m",
			"--dns-timeout", "3s", "--link-workers", "8", "--domain-workers", "5",
			"--dns-zone-checks", "3",
		}, func(o *controllers.Options) {
			o.DNS.ZoneConcurrency = 3
			o.DNS.Server = "127.0.0.1:5353"
			o.DNS.Targets = []string{"lb.example.com", "192.0.2.1", "2001:db8::1"}
			o.DNSRecheckInterval = 5 * time.Minute
			o.PendingBackoff, o.PendingBackoffMax = time.Second, time.Minute
			o.DNS.Timeout = 3 * time.Second
			o.LinkWorkers, o.DomainWorkers = 8, 5
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			o := controllers.DefaultOptions()
			g.Expect(optionstest.Parse(&o, tt.args...)).To(Succeed())
			want := controllers.DefaultOptions()
			tt.want(&want)
			g.Expect(o).To(Equal(want))
		})
	}
}

func TestSetupRejectsBadOptions(t *testing.T) {
	testenv.Need(t)
	srv := newDNS(t)
	tests := []struct {
		name string
		edit func(*controllers.Options)
	}{
		{"recheck interval", func(o *controllers.Options) { o.DNSRecheckInterval = 0 }},
		{"backoff above its cap", func(o *controllers.Options) { o.PendingBackoff = time.Hour }},
		{"DNS timeout", func(o *controllers.Options) { o.DNS.Timeout = 0 }},
		{"no link workers", func(o *controllers.Options) { o.LinkWorkers = 0 }},
		{"no domain workers", func(o *controllers.Options) { o.DomainWorkers = 0 }},
		{"no zone checks", func(o *controllers.Options) { o.DNS.ZoneConcurrency = 0 }},
		// One zone must not be able to hold every Domain worker.
		{"zone checks as many as workers", func(o *controllers.Options) { o.DomainWorkers, o.DNS.ZoneConcurrency = 3, 3 }},
		{"DNS server without port", func(o *controllers.Options) { o.DNS.Server = "127.0.0.1" }},
		{"bad redirect target", func(o *controllers.Options) { o.DNS.Targets = []string{"https://x/"} }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			o := testOptions(srv)
			tt.edit(&o)
			mgr, err := newBareManager()
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(controllers.Setup(mgr, o)).NotTo(Succeed())
		})
	}
}
