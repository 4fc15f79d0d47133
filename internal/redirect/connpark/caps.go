//go:build linux

package connpark

import (
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"sync"
	"time"

	"github.com/valyala/fasthttp"
)

// perIP counts the open connections of each peer address.
type perIP struct {
	mu sync.Mutex
	n  map[netip.Addr]int
}

// add counts a connection from ip unless ip already has max.
func (p *perIP) add(ip netip.Addr, maxConns int) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.n[ip] >= maxConns {
		return false
	}
	if p.n == nil {
		p.n = map[netip.Addr]int{}
	}
	p.n[ip]++
	return true
}

func (p *perIP) remove(ip netip.Addr) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.n[ip] <= 1 {
		delete(p.n, ip)
		return
	}
	p.n[ip]--
}

// peerIP is the connection's peer address, IPv4-mapped IPv6 as IPv4.
func peerIP(c net.Conn) netip.Addr {
	if a, ok := c.RemoteAddr().(*net.TCPAddr); ok {
		return a.AddrPort().Addr().Unmap()
	}
	return netip.Addr{}
}

// reject answers a connection refused by a cap, as fasthttp's Serve does,
// and closes it. The answer fits a new socket's send buffer; the deadline
// only guards the accept loop against the unexpected.
func reject(c net.Conn, status int, serverName, msg string) {
	server := ""
	if serverName != "" {
		server = "Server: " + serverName + "\r\n"
	}
	_ = c.SetWriteDeadline(time.Now().Add(time.Second))
	_, _ = fmt.Fprintf(c, "HTTP/1.1 %d %s\r\nConnection: close\r\n%sDate: %s\r\n"+
		"Content-Type: text/plain\r\nContent-Length: %d\r\n\r\n%s",
		status, http.StatusText(status), server, fasthttp.AppendHTTPDate(nil, time.Now()), len(msg), msg)
	_ = c.Close()
}
