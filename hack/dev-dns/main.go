// Command dev-dns is a tiny authoritative DNS server for trying kurz on a
// laptop: `kurz dev --dns-server 127.0.0.1:5354` verifies Domains against the
// records given here instead of the real DNS, so the walkthrough of
// docs/https.md ("Trying it with kurz dev") needs no domain of your own.
// Not for production.
//
//	go run ./hack/dev-dns -listen 127.0.0.1:5354 \
//	  -record go.example.com=A:127.0.0.1 \
//	  -record _kurz-challenge.go.example.com=TXT:kurz-...
//
// Every other name is NXDOMAIN. It answers UDP and TCP until interrupted.
package main

import (
	"flag"
	"fmt"
	"net"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/miekg/dns"
)

func main() {
	listen := flag.String("listen", "127.0.0.1:5354", "address to answer on (UDP and TCP)")
	records := map[string][]dns.RR{}
	flag.Func("record", "NAME=TYPE:VALUE, TYPE one of A, AAAA, CNAME, TXT; repeatable", func(s string) error {
		rr, err := parseRecord(s)
		if err == nil {
			records[rr.Header().Name] = append(records[rr.Header().Name], rr)
		}
		return err
	})
	flag.Parse()

	handler := dns.HandlerFunc(func(w dns.ResponseWriter, req *dns.Msg) {
		m := new(dns.Msg)
		m.SetReply(req)
		m.Authoritative = true
		for _, q := range req.Question {
			rrs, known := records[strings.ToLower(q.Name)]
			if !known {
				m.Rcode = dns.RcodeNameError
			}
			for _, rr := range rrs {
				if rr.Header().Rrtype == q.Qtype || rr.Header().Rrtype == dns.TypeCNAME {
					m.Answer = append(m.Answer, rr)
				}
			}
		}
		_ = w.WriteMsg(m)
	})
	errs := make(chan error, 2)
	for _, network := range []string{"udp", "tcp"} {
		srv := &dns.Server{Addr: *listen, Net: network, Handler: handler}
		go func() { errs <- srv.ListenAndServe() }()
	}
	fmt.Printf("dev-dns: answering on %s with %d names\n", *listen, len(records))
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	select {
	case err := <-errs:
		fmt.Fprintln(os.Stderr, "dev-dns:", err)
		os.Exit(1)
	case <-sig:
	}
}

// parseRecord reads NAME=TYPE:VALUE.
func parseRecord(s string) (dns.RR, error) {
	name, rest, ok := strings.Cut(s, "=")
	typ, value, ok2 := strings.Cut(rest, ":")
	if !ok || !ok2 || name == "" || value == "" {
		return nil, fmt.Errorf("record %q: want NAME=TYPE:VALUE", s)
	}
	hdr := dns.RR_Header{Name: dns.Fqdn(strings.ToLower(name)), Class: dns.ClassINET, Ttl: 5}
	switch strings.ToUpper(typ) {
	case "A", "AAAA":
		ip := net.ParseIP(value)
		if ip == nil {
			return nil, fmt.Errorf("record %q: %q is not an IP", s, value)
		}
		if ip4 := ip.To4(); ip4 != nil && strings.EqualFold(typ, "A") {
			hdr.Rrtype = dns.TypeA
			return &dns.A{Hdr: hdr, A: ip4}, nil
		}
		hdr.Rrtype = dns.TypeAAAA
		return &dns.AAAA{Hdr: hdr, AAAA: ip}, nil
	case "CNAME":
		hdr.Rrtype = dns.TypeCNAME
		return &dns.CNAME{Hdr: hdr, Target: dns.Fqdn(value)}, nil
	case "TXT":
		hdr.Rrtype = dns.TypeTXT
		return &dns.TXT{Hdr: hdr, Txt: []string{value}}, nil
	}
	return nil, fmt.Errorf("record %q: type must be A, AAAA, CNAME or TXT", s)
}
