// Package dnstest runs an authoritative DNS server on loopback for tests,
// with records that can be changed while it runs. It answers UDP and TCP on
// the same port.
package dnstest

import (
	"fmt"
	"net"
	"strings"
	"sync"
	"testing"

	"github.com/miekg/dns"
)

// Server is a DNS server for tests. The zero value is not usable; call Start.
type Server struct {
	// Addr is the host:port the server answers on (UDP and TCP).
	Addr string

	mu      sync.Mutex
	records map[string]map[uint16][]string // fqdn -> type -> values
	queries int

	udp, tcp *dns.Server
}

// Start starts a server on 127.0.0.1 on a free port and stops it when the
// test ends.
func Start(tb testing.TB) *Server {
	tb.Helper()
	s := &Server{records: map[string]map[uint16][]string{}}
	pc, l, err := listenPair()
	if err != nil {
		tb.Fatalf("dnstest: %v", err)
	}
	s.Addr = pc.LocalAddr().String()
	s.udp = &dns.Server{PacketConn: pc, Handler: s}
	s.tcp = &dns.Server{Listener: l, Handler: s}
	// A server that fails to start never calls NotifyStartedFunc, so its
	// error is waited for too; otherwise the test would hang.
	started := make(chan struct{}, 2)
	stopped := make(chan error, 2)
	for _, srv := range []*dns.Server{s.udp, s.tcp} {
		srv.NotifyStartedFunc = func() { started <- struct{}{} }
		go func() { stopped <- srv.ActivateAndServe() }()
	}
	// Registered before waiting so a failed start still releases the port.
	// Shutdown only stops a started server; closing is harmless after it.
	tb.Cleanup(func() {
		_ = s.udp.Shutdown()
		_ = s.tcp.Shutdown()
		_ = pc.Close()
		_ = l.Close()
	})
	for range 2 {
		select {
		case <-started:
		case err := <-stopped:
			tb.Fatalf("dnstest: server on %s stopped before it started: %v", s.Addr, err)
		}
	}
	return s
}

// Set replaces the records of one name and type (dns.TypeTXT, TypeCNAME,
// TypeA, TypeAAAA). No values removes them.
func (s *Server) Set(name string, rrtype uint16, values ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	fqdn := dns.Fqdn(strings.ToLower(name))
	if len(values) == 0 {
		delete(s.records[fqdn], rrtype)
		if len(s.records[fqdn]) == 0 {
			delete(s.records, fqdn)
		}
		return
	}
	if s.records[fqdn] == nil {
		s.records[fqdn] = map[uint16][]string{}
	}
	s.records[fqdn][rrtype] = append([]string(nil), values...)
}

// Queries returns how many questions the server has answered.
func (s *Server) Queries() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.queries
}

// ServeDNS answers like an authoritative server that also follows CNAMEs it
// knows: the records of the asked type, else the CNAME chain and the
// target's records; NODATA when the name has other records, else NXDOMAIN.
func (s *Server) ServeDNS(w dns.ResponseWriter, req *dns.Msg) {
	m := new(dns.Msg)
	m.SetReply(req)
	m.Authoritative = true
	if len(req.Question) == 1 {
		q := req.Question[0]
		s.mu.Lock()
		s.queries++
		m.Answer, m.Rcode = s.answer(strings.ToLower(q.Name), q.Qtype, 0)
		s.mu.Unlock()
	}
	_ = w.WriteMsg(m)
}

func (s *Server) answer(name string, qtype uint16, depth int) ([]dns.RR, int) {
	byType, ok := s.records[name]
	if !ok {
		return nil, dns.RcodeNameError
	}
	if values, ok := byType[qtype]; ok {
		return rrs(name, qtype, values), dns.RcodeSuccess
	}
	if targets, ok := byType[dns.TypeCNAME]; ok && depth < 8 {
		out := rrs(name, dns.TypeCNAME, targets[:1])
		more, _ := s.answer(dns.Fqdn(targets[0]), qtype, depth+1)
		return append(out, more...), dns.RcodeSuccess
	}
	return nil, dns.RcodeSuccess
}

func rrs(name string, rrtype uint16, values []string) []dns.RR {
	hdr := dns.RR_Header{Name: name, Rrtype: rrtype, Class: dns.ClassINET, Ttl: 1}
	var out []dns.RR
	for _, v := range values {
		switch rrtype {
		case dns.TypeTXT:
			out = append(out, &dns.TXT{Hdr: hdr, Txt: []string{v}})
		case dns.TypeCNAME:
			out = append(out, &dns.CNAME{Hdr: hdr, Target: dns.Fqdn(v)})
		case dns.TypeA:
			out = append(out, &dns.A{Hdr: hdr, A: net.ParseIP(v).To4()})
		case dns.TypeAAAA:
			out = append(out, &dns.AAAA{Hdr: hdr, AAAA: net.ParseIP(v)})
		}
	}
	return out
}

// listenPair listens on UDP and TCP on the same free loopback port. The UDP
// port the kernel picks may be taken for TCP by another process, so it tries
// a few ports rather than failing the test on that race.
func listenPair() (net.PacketConn, net.Listener, error) {
	var lastErr error
	for range 20 {
		pc, err := net.ListenPacket("udp", "127.0.0.1:0")
		if err != nil {
			return nil, nil, fmt.Errorf("listen udp: %w", err)
		}
		l, err := net.Listen("tcp", pc.LocalAddr().String())
		if err == nil {
			return pc, l, nil
		}
		_ = pc.Close()
		lastErr = err
	}
	return nil, nil, fmt.Errorf("listen tcp on a free udp port: %w", lastErr)
}
