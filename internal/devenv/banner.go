package devenv

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// BannerLine starts the banner; tests and scripts wait for it.
const BannerLine = "kurz dev is running"

// PrintBanner tells the user where things are and how to try them. An empty
// address or URL means that server is switched off.
func (e *Env) PrintBanner(w io.Writer, apiAddr, redirectAddr, metricsURL string) {
	var b strings.Builder
	fmt.Fprintf(&b, "\n%s (data in %s; Ctrl-C stops it)\n", BannerLine, e.shown)
	if apiAddr != "" {
		fmt.Fprintf(&b, "  API:        http://%s/api/v1\n", dialAddr(apiAddr))
		// The console is served by the API server (docs/console.md); the
		// token below signs in to it.
		fmt.Fprintf(&b, "  console:    http://%s/console/\n", dialAddr(apiAddr))
	}
	if redirectAddr != "" {
		fmt.Fprintf(&b, "  redirects:  http://%s/<key>\n", dialAddr(redirectAddr))
	}
	if metricsURL != "" {
		fmt.Fprintf(&b, "  metrics:    %s\n", metricsURL)
	}
	fmt.Fprintf(&b, "  token:      %s (ServiceAccount %s/%s, role %s)\n", e.Token(), Workspace, ServiceAccount, Role)
	fmt.Fprintf(&b, "  kubeconfig: %s (cluster admin)\n\nTry:\n", e.Kubeconfig())
	if apiAddr != "" {
		fmt.Fprintf(&b, "  curl -H \"Authorization: Bearer $(cat %s)\" http://%s/api/v1/links\n", shellQuote(e.Token()), dialAddr(apiAddr))
	}
	fmt.Fprintf(&b, "  KUBECONFIG=%s %s get kurz\n\n", shellQuote(e.Kubeconfig()), shellQuote(e.kubectl()))
	fmt.Fprint(w, b.String())
}

// kubectl is how the user can call the kubectl next to etcd: relative to
// the working directory when it is below it.
func (e *Env) kubectl() string {
	if e.bins.Kubectl == "" {
		return "kubectl"
	}
	if wd, err := os.Getwd(); err == nil {
		if rel, err := filepath.Rel(wd, e.bins.Kubectl); err == nil && !strings.HasPrefix(rel, "..") {
			return rel
		}
	}
	return e.bins.Kubectl
}

// dialAddr turns a listen address such as ":8080" into one to connect to.
func dialAddr(addr string) string {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return addr
	}
	if host == "" || host == "0.0.0.0" || host == "::" {
		host = "127.0.0.1"
	}
	return net.JoinHostPort(host, port)
}

// shellQuote quotes s for a POSIX shell when it needs it, so the printed
// commands can be pasted as they are.
func shellQuote(s string) string {
	safe := s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("_./-:=@%+,", r))
	}) < 0
	if safe {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// WaitListening waits, up to timeout, until every address accepts TCP
// connections, so the printed commands work when the user runs them. It
// gives up silently: the banner is still better late than never.
func WaitListening(ctx context.Context, timeout time.Duration, addrs ...string) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var d net.Dialer
	for _, a := range addrs {
		for ctx.Err() == nil {
			conn, err := d.DialContext(ctx, "tcp", dialAddr(a))
			if err == nil {
				conn.Close()
				break
			}
			select {
			case <-ctx.Done():
			case <-time.After(50 * time.Millisecond):
			}
		}
	}
}

// MetricsURL is what the banner shows for a metrics server listening on
// addr: over HTTPS it needs the token of a subject bound to
// kurz-metrics-reader, which kurz dev installs.
func MetricsURL(addr string, secure bool) string {
	if addr == "" || addr == "0" {
		return ""
	}
	if !secure {
		return "http://" + dialAddr(addr) + "/metrics"
	}
	return "https://" + dialAddr(addr) + "/metrics (self-signed; a token bound to ClusterRole kurz-metrics-reader)"
}
