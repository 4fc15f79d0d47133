package redirect

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"os"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"

	"github.com/kurz-dev/kurz/internal/testenv"
)

// TestPasswordCheckSlots: while every check slot is taken, an attempt waits
// checkWait and gets 429 with Retry-After; once a slot frees, attempts are
// checked again.
func TestPasswordCheckSlots(t *testing.T) {
	testenv.Need(t)
	g := NewWithT(t)
	oneLink(t, "slots.test", withPassword(t, "right horse"))
	o := testOptions()
	o.PasswordConcurrency = 1
	ts := startServer(t, o)
	g.Eventually(func() int { return do(t, "GET", ts.base, "slots.test", "/k", nil).status }, 30*time.Second).
		Should(Equal(http.StatusOK))

	// Hold the only slot, as a long check would.
	slots := ts.srv.handler.password.checks
	slots <- struct{}{}
	busy := counterValue(outcomeCounters[outcomePasswordBusy])
	start := time.Now()
	a := postPassword(t, ts.base, "slots.test", "/k", "right horse", nil)
	waited := time.Since(start)
	g.Expect(a.status).To(Equal(http.StatusTooManyRequests))
	g.Expect(a.header.Get("Retry-After")).To(Equal("1"))
	g.Expect(a.header.Get("Set-Cookie")).To(BeEmpty())
	g.Expect(waited).To(BeNumerically(">=", checkWait), "the attempt waited for a slot before giving up")
	g.Expect(counterValue(outcomeCounters[outcomePasswordBusy])).To(Equal(busy + 1))

	// A slot freed while an attempt waits is taken by that attempt.
	go func() { time.Sleep(checkWait / 4); <-slots }()
	a = postPassword(t, ts.base, "slots.test", "/k", "right horse", nil)
	g.Expect(a.status).To(Equal(http.StatusSeeOther))
	g.Expect(a.header.Get("Set-Cookie")).To(ContainSubstring(passwordCookie + "="))
	g.Expect(slots).To(BeEmpty(), "the check gave its slot back")

	// The checks ran in the worker process, which ends with the server.
	pid := ts.srv.handler.password.bcrypt.Pid()
	g.Expect(pid).NotTo(BeZero())
	ts.stop()
	_, err := os.Stat(fmt.Sprintf("/proc/%d", pid))
	g.Expect(os.IsNotExist(err)).To(BeTrue(), "the worker %d is gone", pid)
}

// TestPasswordLinkLimit: visitors from ever new addresses each get a fresh
// per-client bucket, but share the link's: past its burst they get 429.
func TestPasswordLinkLimit(t *testing.T) {
	testenv.Need(t)
	g := NewWithT(t)
	ns, _ := oneLink(t, "linklimit.test", withPassword(t, "right horse"))
	createLink(t, ns, "other", "linklimit.test", "other", "https://dest.example/", withPassword(t, "right horse"))
	o := testOptions()
	o.TrustedProxies = []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}
	ts := startServer(t, o)
	g.Eventually(func() int { return do(t, "GET", ts.base, "linklimit.test", "/k", nil).status }, 30*time.Second).
		Should(Equal(http.StatusOK))

	visitor := 0
	attempt := func(path string) answer {
		visitor++ // a new address every time: the per-client limit never bites
		return postPassword(t, ts.base, "linklimit.test", path, "wrong",
			map[string]string{"X-Forwarded-For": fmt.Sprintf("198.51.%d.%d", visitor/250, visitor%250+1)})
	}
	start := time.Now()
	for i := range linkBurst {
		g.Expect(attempt("/k").status).To(Equal(http.StatusForbidden), "attempt %d is within the link's burst", i)
	}
	// Past the burst the bucket refills one per linkPeriod: however slow
	// this machine, attempts soon outrun it.
	var limited answer
	extra := 0
	for extra = 1; extra <= linkBurst; extra++ {
		if limited = attempt("/k"); limited.status == http.StatusTooManyRequests {
			break
		}
		g.Expect(limited.status).To(Equal(http.StatusForbidden))
	}
	g.Expect(limited.status).To(Equal(http.StatusTooManyRequests))
	g.Expect(extra-1).To(BeNumerically("<=", int(time.Since(start)/linkPeriod)+1), "only refilled tokens passed")
	g.Expect(limited.header.Get("Retry-After")).To(Equal("1"))
	// Another link has its own bucket.
	g.Expect(attempt("/other").status).To(Equal(http.StatusForbidden))
}

// dialFrom opens a TCP connection to addr from the loopback address local.
func dialFrom(t *testing.T, local, addr string) net.Conn {
	t.Helper()
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(local)}, Timeout: 5 * time.Second}
	c, err := d.DialContext(context.Background(), "tcp", addr)
	NewWithT(t).Expect(err).NotTo(HaveOccurred())
	t.Cleanup(func() { c.Close() })
	return c
}

// get sends a keep-alive GET on c and returns the answer's status.
func get(t *testing.T, c net.Conn, host, path string) int {
	t.Helper()
	g := NewWithT(t)
	g.Expect(c.SetDeadline(time.Now().Add(10 * time.Second))).To(Succeed())
	_, err := fmt.Fprintf(c, "GET %s HTTP/1.1\r\nHost: %s\r\n\r\n", path, host)
	g.Expect(err).NotTo(HaveOccurred())
	req, _ := http.NewRequest("GET", path, nil)
	resp, err := http.ReadResponse(bufio.NewReader(c), req)
	g.Expect(err).NotTo(HaveOccurred())
	resp.Body.Close()
	return resp.StatusCode
}

// TestMaxConnsPerIP: past --redirect-max-conns-per-ip a peer's extra
// connection is answered 429 and closed; other peers are not affected.
func TestMaxConnsPerIP(t *testing.T) {
	testenv.Need(t)
	g := NewWithT(t)
	oneLink(t, "conns.test", nil)
	o := testOptions()
	o.MaxConnsPerIP = 2
	ts := startServer(t, o)
	addr := ts.srv.Addr().String()
	// Wait from another address, so 127.0.0.1 starts with no connection.
	g.Eventually(func() int { return get(t, dialFrom(t, "127.0.0.2", addr), "conns.test", "/k") }, 30*time.Second).
		Should(Equal(http.StatusFound))

	a, b := dialFrom(t, "127.0.0.1", addr), dialFrom(t, "127.0.0.1", addr)
	g.Expect(get(t, a, "conns.test", "/k")).To(Equal(http.StatusFound))
	g.Expect(get(t, b, "conns.test", "/k")).To(Equal(http.StatusFound))
	extra := dialFrom(t, "127.0.0.1", addr)
	g.Expect(extra.SetDeadline(time.Now().Add(10 * time.Second))).To(Succeed())
	resp, err := http.ReadResponse(bufio.NewReader(extra), nil)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(resp.StatusCode).To(Equal(http.StatusTooManyRequests))
	// The two served connections still work, and so does another peer.
	g.Expect(get(t, a, "conns.test", "/k")).To(Equal(http.StatusFound))
	g.Expect(get(t, dialFrom(t, "127.0.0.3", addr), "conns.test", "/k")).To(Equal(http.StatusFound))
}

func TestListenerOptionsValidate(t *testing.T) {
	g := NewWithT(t)
	for _, tc := range []struct {
		flag string
		set  func(*Options)
	}{
		{"--redirect-password-concurrency", func(o *Options) { o.PasswordConcurrency = 0 }},
		{"--redirect-max-conns", func(o *Options) { o.MaxConns = 0 }},
		{"--redirect-max-conns-per-ip", func(o *Options) { o.MaxConnsPerIP = -1 }},
	} {
		o := DefaultOptions()
		tc.set(&o)
		g.Expect(o.Validate()).To(MatchError(ContainSubstring(tc.flag)))
	}
	g.Expect(DefaultOptions().PasswordConcurrency).To(BeNumerically(">=", 1))
}

// keepAliveHeaders checks that a header block just under the 32 KiB limit
// is read on a reused keep-alive connection too, where the read buffer went
// back to the pool after the first request and the second starts with the
// one-byte read.
func keepAliveHeaders(t *testing.T, addr, host, path string) {
	g := NewWithT(t)
	c := dialFrom(t, "127.0.0.1", addr)
	cookie := "Cookie: parent=" + strings.Repeat("c", 31<<10) + "\r\n"
	for range 2 {
		g.Expect(c.SetDeadline(time.Now().Add(10 * time.Second))).To(Succeed())
		_, err := fmt.Fprintf(c, "GET %s HTTP/1.1\r\nHost: %s\r\n%s\r\n", path, host, cookie)
		g.Expect(err).NotTo(HaveOccurred())
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		g.Expect(err).NotTo(HaveOccurred())
		resp.Body.Close()
		g.Expect(resp.StatusCode).To(Equal(http.StatusFound))
	}
}
