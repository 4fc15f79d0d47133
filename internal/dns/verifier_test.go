package dns_test

import (
	"context"
	"testing"
	"time"

	mdns "github.com/miekg/dns"
	. "github.com/onsi/gomega"

	"github.com/kurz-dev/kurz/internal/dns"
	"github.com/kurz-dev/kurz/internal/dns/dnstest"
)

func TestVerify(t *testing.T) {
	srv := dnstest.Start(t)
	srv.Set("lb.kurz.test", mdns.TypeA, "192.0.2.10")
	srv.Set("lb.kurz.test", mdns.TypeAAAA, "2001:db8::10")

	v, err := dns.New(dns.Config{Server: srv.Addr, Targets: []string{"LB.kurz.test.", "198.51.100.7"}})
	NewWithT(t).Expect(err).NotTo(HaveOccurred())

	const token = "tok-123"
	tests := []struct {
		name    string
		records func(host string)
		want    dns.Result
	}{
		{"nothing published", func(string) {}, dns.Result{}},
		{"TXT holds the token", func(h string) { srv.Set("_kurz-challenge."+h, mdns.TypeTXT, "other", token) }, dns.Result{Method: dns.MethodTXT}},
		{"TXT holds another value", func(h string) { srv.Set("_kurz-challenge."+h, mdns.TypeTXT, "tok-12") }, dns.Result{}},
		{"CNAME to a target", func(h string) { srv.Set(h, mdns.TypeCNAME, "lb.kurz.test") }, dns.Result{Method: dns.MethodCNAME, Target: "lb.kurz.test"}},
		{"CNAME elsewhere", func(h string) { srv.Set(h, mdns.TypeCNAME, "elsewhere.test") }, dns.Result{}},
		{"A of an IP target", func(h string) { srv.Set(h, mdns.TypeA, "198.51.100.7") }, dns.Result{Method: dns.MethodAddress, Target: "198.51.100.7"}},
		{"A of a hostname target", func(h string) { srv.Set(h, mdns.TypeA, "192.0.2.10") }, dns.Result{Method: dns.MethodAddress, Target: "lb.kurz.test"}},
		{"AAAA of a hostname target", func(h string) { srv.Set(h, mdns.TypeAAAA, "2001:db8::10") }, dns.Result{Method: dns.MethodAddress, Target: "lb.kurz.test"}},
		{"A elsewhere", func(h string) { srv.Set(h, mdns.TypeA, "203.0.113.1") }, dns.Result{}},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			host := "d" + string(rune('a'+i)) + ".example.test"
			tt.records(host)
			got, err := v.Verify(context.Background(), host, token)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(got).To(Equal(tt.want))
			g.Expect(got.Verified()).To(Equal(tt.want.Method != dns.MethodNone))
		})
	}
}

func TestVerifyRecordsChange(t *testing.T) {
	g := NewWithT(t)
	srv := dnstest.Start(t)
	v, err := dns.New(dns.Config{Server: srv.Addr})
	g.Expect(err).NotTo(HaveOccurred())

	srv.Set("_kurz-challenge.change.test", mdns.TypeTXT, "t")
	got, err := v.Verify(context.Background(), "change.test", "t")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(got.Verified()).To(BeTrue())

	srv.Set("_kurz-challenge.change.test", mdns.TypeTXT)
	got, err = v.Verify(context.Background(), "change.test", "t")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(got.Verified()).To(BeFalse(), "the resolver must not cache")
}

func TestVerifyServerDown(t *testing.T) {
	g := NewWithT(t)
	// A port nobody answers on: the lookups fail, which is an error and
	// not "not verified".
	v, err := dns.New(dns.Config{Server: "127.0.0.1:1", Targets: []string{"lb.test"}, Timeout: 2 * time.Second})
	g.Expect(err).NotTo(HaveOccurred())
	got, err := v.Verify(context.Background(), "down.test", "t")
	g.Expect(err).To(HaveOccurred())
	g.Expect(got.Verified()).To(BeFalse())
}

func TestNewRejectsBadConfig(t *testing.T) {
	tests := []dns.Config{
		{Server: "no-port"},
		{Targets: []string{"not a host"}},
		{Targets: []string{"-/"}},
	}
	for _, c := range tests {
		_, err := dns.New(c)
		NewWithT(t).Expect(err).To(HaveOccurred(), "%+v", c)
	}
}
