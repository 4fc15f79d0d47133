package dnstest

import (
	"fmt"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/miekg/dns"
)

// Server is a DNS server for tests. The zero value is not usable; call Start.
type Server struct {
	// Addr is the host:port the server answers on (UDP and TCP).
	Addr string

	mu      sync.Mutex
	records map[string]map[uint16][]string // fqdn -> type -> values
	failing map[string]bool                // fqdn -> answer SERVFAIL
	delays  map[string]time.Duration       // zone fqdn -> delay of its answers
	wake    chan struct{}                  // closed when delays change or the server stops
	queries int

	udp, tcp *dns.Server
}

// Start starts a server on 127.0.0.1 on a free port and stops it when the
// test ends.
func Start(tb testing.TB) *Server {
	tb.Helper()
	s := &Server{records: map[string]map[uint16][]string{}, failing: map[string]bool{}, delays: map[string]time.Duration{}, wake: make(chan struct{})}
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
		s.Delay(".", 0) // wakes delayed answers, so shutdown does not wait for them
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

// Fail makes the server answer SERVFAIL for name (a failed lookup, not an
// absent record) until Fail(name, false).
func (s *Server) Fail(name string, fail bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if fqdn := dns.Fqdn(strings.ToLower(name)); fail {
		s.failing[fqdn] = true
	} else {
		delete(s.failing, fqdn)
	}
}

// Delay holds every answer for zone and the names under it for d (zero
// removes the delay and sends the answers held): a slow zone. Other names
// are answered at once.
func (s *Server) Delay(zone string, d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	close(s.wake)
	s.wake = make(chan struct{})
	if fqdn := dns.Fqdn(strings.ToLower(zone)); d > 0 {
		s.delays[fqdn] = d
	} else {
		delete(s.delays, fqdn)
	}
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
		name := strings.ToLower(q.Name)
		s.mu.Lock()
		s.queries++
		delay, wake := s.delayOf(name), s.wake
		if s.failing[name] {
			m.Rcode = dns.RcodeServerFailure
		} else {
			m.Answer, m.Rcode = s.answer(name, q.Qtype, 0)
		}
		s.mu.Unlock()
		// Each query is served on its own goroutine: a delayed zone holds
		// only its own answers.
		if delay > 0 {
			select {
			case <-time.After(delay):
			case <-wake:
			}
		}
	}
	_ = w.WriteMsg(m)
}

// delayOf is the delay of the zone name is in; s.mu is held.
func (s *Server) delayOf(name string) time.Duration {
	for zone, d := range s.delays {
		if name == zone || strings.HasSuffix(name, "."+zone) {
			return d
		}
	}
	return 0
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
