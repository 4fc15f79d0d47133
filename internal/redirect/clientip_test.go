package redirect

import (
	"flag"
	"io"
	"net/http"
	"net/netip"
	"testing"
	"time"

	. "github.com/onsi/gomega"

	"github.com/kurz-dev/kurz/internal/testenv"
)

func TestTrustedProxiesFlag(t *testing.T) {
	g := NewWithT(t)
	o := DefaultOptions()
	g.Expect(o.TrustedProxies).To(BeEmpty())
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	o.BindFlags(fs)
	g.Expect(fs.Parse([]string{"--redirect-trusted-proxies=10.0.0.0/8,::ffff:192.0.2.1"})).To(Succeed())
	g.Expect(o.TrustedProxies).To(Equal([]netip.Prefix{netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("192.0.2.1/32")}))
	g.Expect(fs.Parse([]string{"--redirect-trusted-proxies=10.0.0.0/33"})).NotTo(Succeed())
}

// TestPasswordLimitBehindProxy: behind a trusted proxy every visitor has a
// bucket of their own (IPv6 visitors share one per /64).
func TestPasswordLimitBehindProxy(t *testing.T) {
	testenv.Need(t)
	g := NewWithT(t)
	oneLink(t, "proxy.test", withPassword(t, "right horse"))
	o := testOptions()
	o.TrustedProxies = []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}
	ts := startServer(t, o)
	g.Eventually(func() int { return do(t, "GET", ts.base, "proxy.test", "/k", nil).status }, 30*time.Second).
		Should(Equal(http.StatusOK))
	attempt := func(xff string) int {
		return postPassword(t, ts.base, "proxy.test", "/k", "wrong", map[string]string{"X-Forwarded-For": xff}).status
	}
	exhaust := func(xff string) {
		for range attemptBurst {
			g.Expect(attempt(xff)).To(Equal(http.StatusForbidden), xff)
		}
		g.Expect(attempt(xff)).To(Equal(http.StatusTooManyRequests), xff)
	}

	exhaust("203.0.113.7")
	g.Expect(attempt("203.0.113.8")).To(Equal(http.StatusForbidden), "another visitor has its own bucket")
	g.Expect(attempt("203.0.113.8, 203.0.113.7")).To(Equal(http.StatusTooManyRequests), "a forged left part changes nothing")

	exhaust("2001:db8:0:1::1")
	g.Expect(attempt("2001:db8:0:1::2")).To(Equal(http.StatusTooManyRequests), "same /64")
	g.Expect(attempt("2001:db8:0:2::1")).To(Equal(http.StatusForbidden), "another /64")
}
