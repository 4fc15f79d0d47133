package main

import (
	"encoding/json"
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

// cookieSecretEnv is the variable the manager reads its password-cookie key
// from; config/manager/manager.yaml fills it from a Secret.
const cookieSecretEnv = "KURZ_REDIRECT_COOKIE_SECRET"

// spoolLimitEnv carries --click-spool-size-limit; config/ sets it from the
// sizeLimit of the volume spoolVolume, and the chart sets both from one value.
const (
	spoolLimitEnv = "KURZ_CLICK_SPOOL_SIZE_LIMIT"
	spoolVolume   = "click-spool"
)

// defaults are the chart's values as config/ sets them, so that the chart
// installed with its defaults is the install manifest.
type defaults struct {
	Repository, Tag    string
	Replicas           int64
	Resources          map[string]any
	TrustedProxies     []string
	RedirectTargets    []string
	DNSServer          string
	ClickFlushInterval string
	MetricsEnable      bool
	MetricsPort        int64
	LeaderElect        bool
	// IngressClass, IngressAnnotations and IngressGracePeriod are the
	// --ingress-* flags: the Ingresses kept for verified Domains.
	IngressClass       string
	IngressAnnotations map[string]string
	IngressGracePeriod string
	// GatewayClass, Gateway and GatewayAnnotations are the --gateway-*
	// flags: the Gateway API's objects kept instead of Ingresses.
	GatewayClass       string
	Gateway            string
	GatewayAnnotations map[string]string
	// CookieSecretName and CookieSecretKey are the Secret (and its key)
	// config/ reads the cookie key from.
	CookieSecretName, CookieSecretKey string
	// ClickSpoolSizeLimit is the click spool volume's sizeLimit, which is
	// also --click-spool-size-limit.
	ClickSpoolSizeLimit string
}

// valueFlags are the owned flags whose value is a value of the chart as
// written.
func (d *defaults) valueFlags() map[string]*string {
	return map[string]*string{
		"--dns-server":           &d.DNSServer,
		"--click-flush-interval": &d.ClickFlushInterval,
		"--ingress-class":        &d.IngressClass,
		"--route-grace-period":   &d.IngressGracePeriod,
		"--gateway-class":        &d.GatewayClass,
		"--gateway":              &d.Gateway,
	}
}

// annotationFlags are the owned flags that add a KEY=VALUE annotation to
// one of the chart's maps.
func (d *defaults) annotationFlags() map[string]*map[string]string {
	return map[string]*map[string]string{
		"--ingress-annotation": &d.IngressAnnotations,
		"--gateway-annotation": &d.GatewayAnnotations,
	}
}

// parsedFlags are the other owned flags, each parsed its own way.
var parsedFlags = []string{"--leader-elect", "--metrics-bind-address", "--redirect-trusted-proxies", "--redirect-target"}

// splitArgs takes the manager flags the chart's values set (the owned
// flags: valueFlags, annotationFlags and parsedFlags) out of the manager's
// args into d and returns the rest in order; every other flag of config/
// is kept as it is (and more come from extraArgs). Owned flags must be
// written --flag=value (or --leader-elect alone), as config/ writes them.
func splitArgs(args []string, d *defaults) ([]string, error) {
	var kept []string
	values, annotations := d.valueFlags(), d.annotationFlags()
	for _, a := range args {
		name, value, hasValue := strings.Cut(a, "=")
		field, annotation := values[name], annotations[name]
		if field == nil && annotation == nil && !slices.Contains(parsedFlags, name) {
			kept = append(kept, a)
			continue
		}
		if !hasValue && name != "--leader-elect" {
			return nil, fmt.Errorf("manager arg %q: write owned flags as %s=VALUE", a, name)
		}
		switch {
		case field != nil:
			*field = value
		case annotation != nil:
			if err := addAnnotation(annotation, a, value); err != nil {
				return nil, err
			}
		case name == "--leader-elect":
			b, err := strconv.ParseBool(value)
			if !hasValue {
				b, err = true, nil
			}
			if err != nil {
				return nil, fmt.Errorf("manager arg %q: %w", a, err)
			}
			d.LeaderElect = b
		case name == "--metrics-bind-address":
			if value == "0" {
				d.MetricsEnable = false
				continue
			}
			host, port, err := net.SplitHostPort(value)
			if err != nil || host != "" {
				return nil, fmt.Errorf("manager arg %q: the chart binds metrics to :PORT, so config/ must too", a)
			}
			if d.MetricsPort, err = strconv.ParseInt(port, 10, 32); err != nil {
				return nil, fmt.Errorf("manager arg %q: %w", a, err)
			}
		case name == "--redirect-trusted-proxies":
			d.TrustedProxies = append(d.TrustedProxies, strings.Split(value, ",")...)
		case name == "--redirect-target":
			d.RedirectTargets = append(d.RedirectTargets, value)
		}
	}
	return kept, nil
}

// addAnnotation adds KEY=VALUE of the manager arg a to *m.
func addAnnotation(m *map[string]string, a, value string) error {
	k, v, ok := strings.Cut(value, "=")
	if !ok {
		name, _, _ := strings.Cut(a, "=")
		return fmt.Errorf("manager arg %q: want %s=KEY=VALUE", a, name)
	}
	if *m == nil {
		*m = map[string]string{}
	}
	(*m)[k] = v
	return nil
}

// readDefaults reads the values' defaults from the manager Deployment.
func readDefaults(dep *unstructured.Unstructured, container map[string]any) (defaults, []string, error) {
	d := defaults{MetricsEnable: true}
	repo, tag, _ := strings.Cut(defaultImage, ":")
	d.Repository, d.Tag = repo, tag
	replicas, found, err := unstructured.NestedInt64(dep.Object, "spec", "replicas")
	if err != nil {
		return d, nil, err
	}
	d.Replicas = 1
	if found {
		d.Replicas = replicas
	}
	d.Resources, _, _ = unstructured.NestedMap(container, "resources")

	args, _, err := unstructured.NestedStringSlice(container, "args")
	if err != nil {
		return d, nil, err
	}
	kept, err := splitArgs(args, &d)
	if err != nil {
		return d, nil, err
	}
	if d.MetricsPort == 0 {
		port, err := metricsPort(container)
		if err != nil {
			return d, nil, err
		}
		d.MetricsPort = port
	}

	env, _, _ := unstructured.NestedSlice(container, "env")
	for _, e := range env {
		m, _ := e.(map[string]any)
		if m["name"] != cookieSecretEnv {
			continue
		}
		d.CookieSecretName, _, _ = unstructured.NestedString(m, "valueFrom", "secretKeyRef", "name")
		d.CookieSecretKey, _, _ = unstructured.NestedString(m, "valueFrom", "secretKeyRef", "key")
	}
	if d.CookieSecretName == "" || d.CookieSecretKey == "" {
		return d, nil, fmt.Errorf("the manager container has no env %s from a secretKeyRef", cookieSecretEnv)
	}
	if d.ClickSpoolSizeLimit, err = spoolSizeLimit(dep, env); err != nil {
		return d, nil, err
	}
	return d, kept, nil
}

// spoolSizeLimit is the click spool volume's sizeLimit, checked to be what
// the manager's env spoolLimitEnv says: the chart sets both from one value,
// so config/ must give them one value too (its kustomize replacement).
func spoolSizeLimit(dep *unstructured.Unstructured, env []any) (string, error) {
	var fromEnv, fromVolume string
	for _, e := range env {
		if m, _ := e.(map[string]any); m["name"] == spoolLimitEnv {
			fromEnv, _ = m["value"].(string)
		}
	}
	volumes, _, _ := unstructured.NestedSlice(dep.Object, "spec", "template", "spec", "volumes")
	for _, v := range volumes {
		if m, _ := v.(map[string]any); m["name"] == spoolVolume {
			fromVolume, _, _ = unstructured.NestedString(m, "emptyDir", "sizeLimit")
		}
	}
	if fromVolume == "" || fromEnv != fromVolume {
		return "", fmt.Errorf("the manager's env %s (%q) must be the sizeLimit of its emptyDir volume %s (%q)", spoolLimitEnv, fromEnv, spoolVolume, fromVolume)
	}
	return fromVolume, nil
}

// metricsPort is the containerPort of the manager's port named metrics.
func metricsPort(container map[string]any) (int64, error) {
	ports, _, _ := unstructured.NestedSlice(container, "ports")
	for _, p := range ports {
		m, _ := p.(map[string]any)
		if m["name"] == "metrics" {
			if port, ok, _ := unstructured.NestedInt64(m, "containerPort"); ok {
				return port, nil
			}
		}
	}
	return 0, fmt.Errorf("the manager container has no port named metrics")
}

// valuesYAML is values.yaml: the defaults, documented.
func valuesYAML(d defaults) ([]byte, error) {
	resources, err := blockYAML(d.Resources, 2)
	if err != nil {
		return nil, err
	}
	j := func(v any) string {
		b, _ := json.Marshal(v)
		return string(b)
	}
	jmap := func(m map[string]string) string {
		if len(m) == 0 {
			return "{}"
		}
		return j(m)
	}
	list := func(l []string) string {
		if len(l) == 0 {
			return "[]"
		}
		return j(l)
	}
	return fmt.Appendf(nil, `# Values of the kurz chart. Generated from config/ by hack/gen-dist (make helm):
# change config/ or the generator, not this file. Every other manager flag
# goes into extraArgs.

image:
  repository: %s
  tag: %s
  pullPolicy: IfNotPresent

# Every replica serves the API and redirects from its own cache; the elected
# leader also runs the controllers.
replicas: %d

resources:%s

# CIDRs of proxies (ingress, load balancer) whose X-Forwarded-For names the
# visitor, for the wrong-password limit (--redirect-trusted-proxies).
trustedProxies: %s

# The key that signs password cookies, shared by all replicas
# (KURZ_REDIRECT_COOKIE_SECRET). Set one of:
#   existingSecret: a Secret in the release namespace with key %q;
#   value: the chart creates Secret %q with it (keep it out of git:
#          --set cookieSecret.value="$(head -c 32 /dev/urandom | base64)").
# With neither, the manager reads Secret %q if it exists, else every
# replica signs with a key of its own.
cookieSecret:
  existingSecret: ""
  value: ""

# Hostnames or IPs the redirect server is reached at: a domain pointing there
# (CNAME, A, AAAA) is verified without a TXT record (--redirect-target).
redirectTargets: %s

# DNS server (host:port) domains are verified against; empty: the system
# resolver (--dns-server).
dnsServer: %s

# How often counted clicks are written to Link status; empty: kurz's default
# (--click-flush-interval).
clickFlushInterval: %s

# Size limit of the emptyDir holding the click spool (--click-spool-size-limit
# too): clicks a replica cannot write while kube-apiserver is unreachable wait
# there, in at most half of it; past that the Links with the fewest pending
# clicks are dropped and counted (kurz_redirect_clicks_dropped_total).
clickSpoolSizeLimit: %s

# Prometheus /metrics on :port (--metrics-bind-address), over HTTPS for
# bearer tokens bound to ClusterRole kurz-metrics-reader, and a Service for
# it. serviceMonitor: a ServiceMonitor (monitoring.coreos.com/v1) for the
# Prometheus Operator, whose CRD must be installed; bind Prometheus's
# ServiceAccount to kurz-metrics-reader.
metrics:
  enable: %t
  port: %d
  service:
    enable: true
  serviceMonitor:
    enabled: false

# Elect a leader (a Lease) to run the controllers (--leader-elect). Turn it off
# only with one replica.
leaderElection:
  enable: %t

# HTTPS for custom domains: with className set, kurz keeps one Ingress of that
# class per verified Domain, in the release namespace, routing the hostname to
# Service kurz-redirect with a tls entry for Secret kurz-tls-<hostname>
# (--ingress-class). annotations go on every Ingress (--ingress-annotation),
# e.g. {cert-manager.io/cluster-issuer: letsencrypt} to have cert-manager
# issue the certificates. gracePeriod: how long an Ingress outlives its
# Domain's Active phase; empty: kurz's default (--route-grace-period).
ingress:
  className: %s
  annotations: %s
  gracePeriod: %s

# HTTPS through the Gateway API instead (not with ingress.className): with
# className set, kurz keeps Gateways of that class in the release namespace
# (an HTTP listener and one HTTPS listener per verified hostname, 63 hostnames
# a Gateway) and an HTTPRoute per Domain to Service kurz-redirect
# (--gateway-class); with name (NAMESPACE/NAME of the platform's shared
# Gateway) ListenerSets attached to it instead (--gateway). annotations go on
# every Gateway or ListenerSet (--gateway-annotation), e.g.
# {cert-manager.io/cluster-issuer: letsencrypt}. ingress.gracePeriod applies.
gateway:
  className: %s
  name: %s
  annotations: %s

# Install the CRDs Link and Domain. They are kept on helm uninstall (deleting
# them deletes every Link and Domain): remove them with kubectl delete crd.
crds:
  install: true

# More manager flags, e.g. ["--api-trusted-proxies=10.0.0.0/8", "--redirect-status=301"].
extraArgs: []
%s%s`, d.Repository, j(d.Tag), d.Replicas, resources, list(d.TrustedProxies),
		d.CookieSecretKey, d.CookieSecretName, d.CookieSecretName,
		list(d.RedirectTargets), j(d.DNSServer), j(d.ClickFlushInterval), j(d.ClickSpoolSizeLimit),
		d.MetricsEnable, d.MetricsPort, d.LeaderElect,
		j(d.IngressClass), jmap(d.IngressAnnotations), j(d.IngressGracePeriod),
		j(d.GatewayClass), j(d.Gateway), jmap(d.GatewayAnnotations), consoleValues, analyticsValues), nil
}

// blockYAML is v as the value of a key: a YAML block indented by n below
// it, or " {}" when v is empty.
func blockYAML(v map[string]any, n int) (string, error) {
	if len(v) == 0 {
		return " {}", nil
	}
	y, err := yaml.Marshal(v)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	for _, line := range strings.Split(strings.TrimSuffix(string(y), "\n"), "\n") {
		b.WriteString("\n" + indent(n) + line)
	}
	return b.String(), nil
}
