package main

import (
	"testing"

	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// TestSplitArgs: the flags the values own leave config/'s args and become
// the values' defaults; the rest stay in order; owned flags the chart could
// not reproduce are refused.
func TestSplitArgs(t *testing.T) {
	g := NewWithT(t)
	d := defaults{MetricsEnable: true}
	kept, err := splitArgs([]string{
		"manager", "--leader-elect", "--api-bind-address=:8080",
		"--metrics-bind-address=:9090", "--redirect-trusted-proxies=10.0.0.0/8,192.168.0.0/16",
		"--redirect-target=a.example.com", "--redirect-target=b.example.com",
		"--dns-server=10.0.0.10:53", "--click-flush-interval=5s", "--click-spool=/var/lib/kurz/clicks.spool",
		"--ingress-class=nginx", "--ingress-annotation=cert-manager.io/cluster-issuer=letsencrypt", "--route-grace-period=2h",
		"--gateway-class=example", "--gateway=infra/shared", "--gateway-annotation=cert-manager.io/issuer=ca",
	}, &d)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(kept).To(Equal([]string{"manager", "--api-bind-address=:8080", "--click-spool=/var/lib/kurz/clicks.spool"}))
	g.Expect(d).To(Equal(defaults{
		LeaderElect: true, MetricsEnable: true, MetricsPort: 9090,
		TrustedProxies:     []string{"10.0.0.0/8", "192.168.0.0/16"},
		RedirectTargets:    []string{"a.example.com", "b.example.com"},
		DNSServer:          "10.0.0.10:53",
		ClickFlushInterval: "5s",
		IngressClass:       "nginx",
		IngressAnnotations: map[string]string{"cert-manager.io/cluster-issuer": "letsencrypt"},
		IngressGracePeriod: "2h",
		GatewayClass:       "example",
		Gateway:            "infra/shared",
		GatewayAnnotations: map[string]string{"cert-manager.io/issuer": "ca"},
	}))

	d = defaults{MetricsEnable: true}
	_, err = splitArgs([]string{"manager", "--leader-elect=false", "--metrics-bind-address=0"}, &d)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(d.LeaderElect).To(BeFalse())
	g.Expect(d.MetricsEnable).To(BeFalse())

	for _, bad := range [][]string{
		{"--dns-server", "10.0.0.10:53"},          // value in the next arg
		{"--metrics-bind-address=127.0.0.1:8082"}, // the chart binds :port
		{"--leader-elect=maybe"},
		{"--ingress-annotation=no-value"},
		{"--gateway-annotation=no-value"},
	} {
		_, err := splitArgs(bad, &defaults{})
		g.Expect(err).To(HaveOccurred(), "%q", bad)
	}
}

// TestTemplaterKeepsLiteralBraces: "{{" in config/ (a CRD description, say)
// must reach the cluster as text, not be run as a template action.
func TestTemplaterKeepsLiteralBraces(t *testing.T) {
	g := NewWithT(t)
	tp := &templater{}
	out, err := tp.render(map[string]any{"description": "use {{ key }} here", "name": tp.scalar("{{ .Release.Name }}")})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(out).To(Equal("description: use {{ \"{{\" }} key }} here\nname: {{ .Release.Name }}\n"))
}

// TestSpoolSizeLimit: the chart sets the click spool volume's sizeLimit and
// --click-spool-size-limit (through its env) from one value, so config/
// must give both one number.
func TestSpoolSizeLimit(t *testing.T) {
	g := NewWithT(t)
	dep := func(sizeLimit string) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{"template": map[string]any{"spec": map[string]any{
			"volumes": []any{map[string]any{"name": spoolVolume, "emptyDir": map[string]any{"sizeLimit": sizeLimit}}},
		}}}}}
	}
	env := func(v string) []any { return []any{map[string]any{"name": spoolLimitEnv, "value": v}} }
	got, err := spoolSizeLimit(dep("64Mi"), env("64Mi"))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(got).To(Equal("64Mi"))
	for _, bad := range [][2]string{{"64Mi", "32Mi"}, {"64Mi", ""}, {"", ""}} {
		_, err := spoolSizeLimit(dep(bad[0]), env(bad[1]))
		g.Expect(err).To(MatchError(ContainSubstring(spoolLimitEnv)), "%q", bad)
	}
}
