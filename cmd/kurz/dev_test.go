package main

import (
	"net"
	"strconv"
	"testing"
	"time"

	"github.com/kurz-dev/kurz/controllers"
	. "github.com/onsi/gomega"
)

// The end-to-end test of `kurz dev` (real processes) is in internal/devenv.

func TestParseDevFlags(t *testing.T) {
	tests := []struct {
		name                   string
		args                   []string
		dataDir, api, redirect string
		metrics, probes        string
		reserved               []int // ports etcd and kube-apiserver must leave to the manager
		leaderElect, wantErr   bool
		shutdownDelay          time.Duration
	}{
		{name: "defaults", dataDir: ".kurz", api: "127.0.0.1:8080", redirect: "127.0.0.1:8081", metrics: "127.0.0.1:8082", probes: "0",
			reserved: []int{8080, 8081, 8082}},
		{name: "dev flags", args: []string{"--data-dir", "/x", "--api-addr", "127.0.0.1:1", "--redirect-addr", "127.0.0.1:2"},
			dataDir: "/x", api: "127.0.0.1:1", redirect: "127.0.0.1:2", metrics: "127.0.0.1:8082", probes: "0", reserved: []int{1, 2, 8082}},
		{name: "manager flags still work", args: []string{"--api-bind-address", ":1", "--redirect-bind-address", ":2", "--metrics-bind-address", "0", "--health-probe-bind-address", ":3", "--pprof-bind-address", "[::1]:4", "--leader-elect"},
			dataDir: ".kurz", api: ":1", redirect: ":2", metrics: "0", probes: ":3", reserved: []int{1, 2, 3, 4}, leaderElect: true},
		{name: "last of alias and manager flag wins", args: []string{"--api-addr", ":1", "--api-bind-address", ":2", "--redirect-bind-address", ":3", "--redirect-addr", ":4"},
			dataDir: ".kurz", api: ":2", redirect: ":4", metrics: "127.0.0.1:8082", probes: "0", reserved: []int{2, 4, 8082}},
		{name: "a shutdown delay when asked for", args: []string{"--shutdown-delay", "3s"},
			dataDir: ".kurz", api: "127.0.0.1:8080", redirect: "127.0.0.1:8081", metrics: "127.0.0.1:8082", probes: "0", reserved: []int{8080, 8081, 8082}, shutdownDelay: 3 * time.Second},
		{name: "manager options are validated", args: []string{"--leader-elect", "--leader-election-renew-deadline", "1m"}, wantErr: true},
		{name: "devenv options are validated", args: []string{"--data-dir="}, wantErr: true},
		{name: "role options are validated", args: []string{"--redirect-status", "200"}, wantErr: true},
		{name: "unknown flag", args: []string{"--nope"}, wantErr: true},
		{name: "stray argument", args: []string{"extra"}, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			c, err := parseDevFlags(tt.args)
			if tt.wantErr {
				g.Expect(err).To(HaveOccurred())
				return
			}
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(c.env.DataDir).To(Equal(tt.dataDir))
			g.Expect(c.manager.API.BindAddress).To(Equal(tt.api))
			g.Expect(c.manager.Redirect.BindAddress).To(Equal(tt.redirect))
			g.Expect(c.manager.MetricsBindAddress).To(Equal(tt.metrics))
			g.Expect(c.manager.HealthProbeBindAddress).To(Equal(tt.probes))
			g.Expect(c.env.ReservedPorts).To(Equal(tt.reserved))
			g.Expect(c.manager.LeaderElect).To(Equal(tt.leaderElect))
			g.Expect(c.manager.ShutdownDelay).To(Equal(tt.shutdownDelay), "no shutdown delay by default: no endpoints to leave")
		})
	}
}

// TestDevPicksPortZero: a listener asked for on any free port (port 0) gets
// one before the control plane starts, on its host, so that the banner
// shows where it listens and etcd and kube-apiserver leave it alone. "0"
// (off) stays off.
func TestDevPicksPortZero(t *testing.T) {
	g := NewWithT(t)
	c := mustParseDevFlags(t, []string{"--api-addr", "127.0.0.1:0", "--redirect-addr", ":0",
		"--metrics-bind-address", "0", "--pprof-bind-address", "[::1]:0"})
	var ports []int
	for _, a := range []struct{ addr, host string }{
		{c.manager.API.BindAddress, "127.0.0.1"}, {c.manager.Redirect.BindAddress, ""}, {c.manager.PprofBindAddress, "::1"},
	} {
		host, port, err := net.SplitHostPort(a.addr)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(host).To(Equal(a.host))
		p, err := strconv.Atoi(port)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(p).To(BeNumerically(">", 0), a.addr)
		ports = append(ports, p)
	}
	g.Expect(c.manager.MetricsBindAddress).To(Equal("0"))
	g.Expect(c.manager.HealthProbeBindAddress).To(Equal("0"))
	g.Expect(c.env.ReservedPorts).To(Equal(ports), "three different ports, all left to the manager")
	g.Expect(ports[0]).NotTo(Equal(ports[1]))
	g.Expect(ports[1]).NotTo(Equal(ports[2]))
	g.Expect(ports[0]).NotTo(Equal(ports[2]))
}

func TestDevSpoolsClicksIntoDataDir(t *testing.T) {
	g := NewWithT(t)
	c := mustParseDevFlags(t, []string{"--data-dir", "/x"})
	g.Expect(c.manager.Redirect.Clicks.Spool).To(Equal("/x/clicks.spool"))
	c = mustParseDevFlags(t, []string{"--data-dir", "/x", "--click-spool", "/y/s"})
	g.Expect(c.manager.Redirect.Clicks.Spool).To(Equal("/y/s"))
}

// TestDevKeepsSessionKeyInDataDir: console sessions are sealed with a key
// in the data dir (made on first start), unless a key file is given.
func TestDevKeepsSessionKeyInDataDir(t *testing.T) {
	g := NewWithT(t)
	c := mustParseDevFlags(t, []string{"--data-dir", "/x"})
	g.Expect(c.manager.API.ConsoleSessionKeyFile).To(Equal("/x/console-session.key"))
	g.Expect(c.sessionKey).To(Equal("/x/console-session.key"), "made on first start")
	c = mustParseDevFlags(t, []string{"--data-dir", "/x", "--console-session-key-file", "/y/key"})
	g.Expect(c.manager.API.ConsoleSessionKeyFile).To(Equal("/y/key"))
	g.Expect(c.sessionKey).To(BeEmpty(), "a given key file is not made")
}

// TestDevMetricsSecureByDefault: kurz dev serves metrics over HTTPS with
// token checks, as a cluster does, unless --metrics-secure=false.
func TestDevMetricsSecureByDefault(t *testing.T) {
	g := NewWithT(t)
	c := mustParseDevFlags(t, nil)
	g.Expect(c.manager.MetricsSecure).To(BeTrue())
	c = mustParseDevFlags(t, []string{"--metrics-secure=false"})
	g.Expect(c.manager.MetricsSecure).To(BeFalse())
}

func TestDevIngressFlags(t *testing.T) {
	g := NewWithT(t)
	c := mustParseDevFlags(t, []string{"--ingress-class", "nginx", "--ingress-annotation", "cert-manager.io/cluster-issuer=letsencrypt"})
	in := c.manager.Controllers.Ingress
	g.Expect(in.Class).To(Equal("nginx"))
	g.Expect(c.manager.Controllers.Routes.Namespace).To(Equal("default"), "kurz dev runs in no pod: Ingresses go to default")
	g.Expect(in.Backend.String()).To(Equal("kurz-redirect:http"))
	g.Expect(in.Annotations).To(Equal(map[string]string{"cert-manager.io/cluster-issuer": "letsencrypt"}))

	// The names before the Gateway API support still set the shared
	// route options.
	c = mustParseDevFlags(t, []string{"--ingress-class", "nginx", "--ingress-namespace", "kurz", "--ingress-grace-period", "2h"})
	g.Expect(c.manager.Controllers.Routes).To(Equal(controllers.RouteOptions{Namespace: "kurz", GracePeriod: 2 * time.Hour}))
	c = mustParseDevFlags(t, []string{"--gateway-class", "example", "--route-namespace", "edge", "--route-grace-period", "5m"})
	g.Expect(c.manager.Controllers.Routes).To(Equal(controllers.RouteOptions{Namespace: "edge", GracePeriod: 5 * time.Minute}))

	_, err := parseDevFlags([]string{"--ingress-annotation", "no-equals-sign"})
	g.Expect(err).To(MatchError(ContainSubstring("want KEY=VALUE")))
	_, err = parseDevFlags([]string{"--ingress-backend", "kurz-redirect"})
	g.Expect(err).To(MatchError(ContainSubstring("want SERVICE:PORT")))
}

// The Gateway API flags parse, and a second way of routing is a clear
// error before anything starts.
func TestDevGatewayFlags(t *testing.T) {
	g := NewWithT(t)
	c := mustParseDevFlags(t, []string{"--gateway-class", "example", "--gateway-annotation", "cert-manager.io/cluster-issuer=letsencrypt"})
	gw := c.manager.Controllers.Gateway
	g.Expect(gw.Class).To(Equal("example"))
	g.Expect(gw.Backend.String()).To(Equal("kurz-redirect:80"))
	g.Expect(gw.Annotations).To(Equal(map[string]string{"cert-manager.io/cluster-issuer": "letsencrypt"}))
	g.Expect(c.manager.Controllers.Routes.Namespace).To(Equal("default"))

	c = mustParseDevFlags(t, []string{"--gateway", "infra/shared", "--gateway-backend", "kurz-redirect:8081"})
	g.Expect(c.manager.Controllers.Gateway.Parent.String()).To(Equal("infra/shared"))
	g.Expect(c.manager.Controllers.Gateway.Backend.PortNumber).To(Equal(int32(8081)))

	for want, args := range map[string][]string{
		"--ingress-class and --gateway-class/--gateway are exclusive": {"--gateway-class", "example", "--ingress-class", "nginx"},
		"--gateway-class and --gateway are exclusive":                 {"--gateway-class", "example", "--gateway", "infra/shared"},
		"want NAMESPACE/NAME":                                         {"--gateway", "shared"},
		"needs the Service's port number":                             {"--gateway-backend", "kurz-redirect:http"},
	} {
		_, err := parseDevFlags(args)
		g.Expect(err).To(MatchError(ContainSubstring(want)), "%q", args)
	}
}

// TestDevControlPlaneFlags: no watch cache for Links and an 8 GiB etcd
// quota unless asked otherwise; a quota must be positive.
func TestDevControlPlaneFlags(t *testing.T) {
	g := NewWithT(t)
	c := mustParseDevFlags(t, nil)
	g.Expect(c.env.LinksWatchCache).To(BeFalse())
	g.Expect(c.env.EtcdQuotaBytes).To(Equal(int64(8 << 30)))
	c = mustParseDevFlags(t, []string{"--links-watch-cache", "--etcd-quota-backend-bytes", "4294967296"})
	g.Expect(c.env.LinksWatchCache).To(BeTrue())
	g.Expect(c.env.EtcdQuotaBytes).To(Equal(int64(4 << 30)))
	_, err := parseDevFlags([]string{"--etcd-quota-backend-bytes", "0"})
	g.Expect(err).To(MatchError(ContainSubstring("must be positive")))
}

// mustParseDevFlags parses args as kurz dev does and fails the test on an
// error.
func mustParseDevFlags(t *testing.T, args []string) devOptions {
	t.Helper()
	c, err := parseDevFlags(args)
	NewWithT(t).Expect(err).NotTo(HaveOccurred(), "%q", args)
	return c
}
