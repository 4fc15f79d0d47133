package dns_test

import (
	"context"
	"errors"
	"testing"
	"time"

	mdns "github.com/miekg/dns"
	. "github.com/onsi/gomega"

	"github.com/kurz-dev/kurz/internal/dns"
	"github.com/kurz-dev/kurz/internal/dns/dnstest"
	"github.com/kurz-dev/kurz/internal/optionstest"
)

func TestVerify(t *testing.T) {
	srv := dnstest.Start(t)
	srv.Set("lb.kurz.test", mdns.TypeA, "192.0.2.10")
	srv.Set("lb.kurz.test", mdns.TypeAAAA, "2001:db8::10")

	v, err := dns.New(srv.Options("LB.kurz.test.", "198.51.100.7"))
	NewWithT(t).Expect(err).NotTo(HaveOccurred())

	const token = "tok-123"
	tests := []struct {
		name    string
		records func(host string)
		want    dns.Result
	}{
		{"nothing published", func(string) {}, dns.Result{TXTAbsent: true}},
		{"TXT holds the token", func(h string) { srv.Set("_kurz-challenge."+h, mdns.TypeTXT, "other", token) }, dns.Result{Method: dns.MethodTXT}},
		{"TXT holds another value", func(h string) { srv.Set("_kurz-challenge."+h, mdns.TypeTXT, "tok-12") }, dns.Result{TXTAbsent: true}},
		{"CNAME to a target", func(h string) { srv.Set(h, mdns.TypeCNAME, "lb.kurz.test") }, dns.Result{Method: dns.MethodCNAME, Target: "lb.kurz.test", TXTAbsent: true}},
		{"CNAME elsewhere", func(h string) { srv.Set(h, mdns.TypeCNAME, "elsewhere.test") }, dns.Result{TXTAbsent: true}},
		{"A of an IP target", func(h string) { srv.Set(h, mdns.TypeA, "198.51.100.7") }, dns.Result{Method: dns.MethodAddress, Target: "198.51.100.7", TXTAbsent: true}},
		{"A of a hostname target", func(h string) { srv.Set(h, mdns.TypeA, "192.0.2.10") }, dns.Result{Method: dns.MethodAddress, Target: "lb.kurz.test", TXTAbsent: true}},
		{"AAAA of a hostname target", func(h string) { srv.Set(h, mdns.TypeAAAA, "2001:db8::10") }, dns.Result{Method: dns.MethodAddress, Target: "lb.kurz.test", TXTAbsent: true}},
		{"A elsewhere", func(h string) { srv.Set(h, mdns.TypeA, "203.0.113.1") }, dns.Result{TXTAbsent: true}},
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
	v, err := dns.New(srv.Options())
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
	o := dns.DefaultOptions()
	o.Server, o.Targets, o.Timeout = "127.0.0.1:1", []string{"lb.test"}, 2*time.Second
	v, err := dns.New(o)
	g.Expect(err).NotTo(HaveOccurred())
	got, err := v.Verify(context.Background(), "down.test", "t")
	g.Expect(err).To(HaveOccurred())
	g.Expect(got.Verified()).To(BeFalse())
}

func TestOptionsValidate(t *testing.T) {
	optionstest.Validate(t, dns.DefaultOptions, []optionstest.Case[dns.Options]{
		{Name: "server with port", Edit: func(o *dns.Options) { o.Server = "127.0.0.1:53" }, Error: ""},
		{Name: "server without port", Edit: func(o *dns.Options) { o.Server = "no-port" }, Error: "dns-server"},
		{Name: "targets", Edit: func(o *dns.Options) { o.Targets = []string{"lb.example.com", "192.0.2.1"} }, Error: ""},
		{Name: "target not a host", Edit: func(o *dns.Options) { o.Targets = []string{"not a host"} }, Error: "redirect-target"},
		{Name: "target a path", Edit: func(o *dns.Options) { o.Targets = []string{"-/"} }, Error: "redirect-target"},
		{Name: "no timeout", Edit: func(o *dns.Options) { o.Timeout = 0 }, Error: "dns-timeout"},
		{Name: "no zone bound", Edit: func(o *dns.Options) { o.ZoneConcurrency = 0 }, Error: ""},
		{Name: "negative zone bound", Edit: func(o *dns.Options) { o.ZoneConcurrency = -1 }, Error: "dns-zone-checks"},
	})
}

// TestNewRejectsBadOptions: New validates, and fills nothing in.
func TestNewRejectsBadOptions(t *testing.T) {
	g := NewWithT(t)
	_, err := dns.New(dns.DefaultOptions())
	g.Expect(err).NotTo(HaveOccurred())
	_, err = dns.New(dns.Options{})
	g.Expect(err).To(MatchError(ContainSubstring("dns-timeout")))
	_, err = dns.New(dns.Options{Server: "no-port", Timeout: time.Second})
	g.Expect(err).To(MatchError(ContainSubstring("dns-server")))
}

// TestVerifyTXTFailureIsNotAbsence: a TXT lookup that fails (SERVFAIL) must
// not read as a missing record, or a flaky server would strip TXT proof.
func TestVerifyTXTFailureIsNotAbsence(t *testing.T) {
	g := NewWithT(t)
	srv := dnstest.Start(t)
	srv.Set("lb.kurz.test", mdns.TypeA, "192.0.2.10")
	v, err := dns.New(srv.Options("lb.kurz.test"))
	g.Expect(err).NotTo(HaveOccurred())

	srv.Set("fail.test", mdns.TypeCNAME, "lb.kurz.test")
	srv.Fail("_kurz-challenge.fail.test", true)
	got, err := v.Verify(context.Background(), "fail.test", "tok")
	g.Expect(err).NotTo(HaveOccurred(), "the CNAME proves the domain anyway")
	g.Expect(got).To(Equal(dns.Result{Method: dns.MethodCNAME, Target: "lb.kurz.test"}), "TXTAbsent stays false")

	srv.Set("fail.test", mdns.TypeCNAME)
	got, err = v.Verify(context.Background(), "fail.test", "tok")
	g.Expect(err).To(HaveOccurred())
	g.Expect(got.TXTAbsent).To(BeFalse())

	srv.Fail("_kurz-challenge.fail.test", false)
	got, err = v.Verify(context.Background(), "fail.test", "tok")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(got).To(Equal(dns.Result{TXTAbsent: true}))
}

// TestVerifyZoneBound: with ZoneConcurrency 1, a zone that answers slowly
// holds one check; a second check of the same zone fails at once with
// ErrZoneBusy, and checks of other zones go on.
func TestVerifyZoneBound(t *testing.T) {
	g := NewWithT(t)
	srv := dnstest.Start(t)
	srv.Set("_kurz-challenge.go.fast.test", mdns.TypeTXT, "tok")
	o := srv.Options()
	o.Timeout = 30 * time.Second
	v, err := dns.New(o)
	g.Expect(err).NotTo(HaveOccurred())
	srv.Delay("slow.test", time.Hour)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stuck := make(chan error, 1)
	go func() { _, err := v.Verify(ctx, "a.slow.test", "tok"); stuck <- err }()
	// Once the server was asked, the stuck check holds the zone's slot.
	g.Eventually(srv.Queries, 5*time.Second, 10*time.Millisecond).Should(BeNumerically(">", 0))
	_, err = v.Verify(context.Background(), "b.slow.test", "tok")
	g.Expect(err).To(MatchError(dns.ErrZoneBusy))

	got, err := v.Verify(context.Background(), "go.fast.test", "tok")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(got.Method).To(Equal(dns.MethodTXT))

	srv.Delay("slow.test", 0) // sends the answers held
	g.Eventually(stuck, 5*time.Second).Should(Receive())
	_, err = v.Verify(context.Background(), "b.slow.test", "tok")
	g.Expect(errors.Is(err, dns.ErrZoneBusy)).To(BeFalse(), "the slot is released: %v", err)
}

func TestZone(t *testing.T) {
	g := NewWithT(t)
	g.Expect(dns.Zone("links.Victim.com.")).To(Equal("victim.com"))
	g.Expect(dns.Zone("a.b.example.co.uk")).To(Equal("example.co.uk"))
	g.Expect(dns.Zone("go.slow.test")).To(Equal("slow.test"))
	g.Expect(dns.Zone("localhost")).To(Equal("localhost"))
}
