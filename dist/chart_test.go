package dist_test

import (
	"encoding/base64"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	. "github.com/onsi/gomega"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/engine"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/kurz-dev/kurz/internal/testenv"
)

// renderChart renders dist/chart as `helm install --namespace ns` would, with
// values over the chart's defaults. Strict: a template naming a value the
// chart does not have fails.
func renderChart(ns string, values map[string]any) ([]byte, error) {
	ch, err := loader.Load(filepath.Join(testenv.RepoRoot(), "dist", "chart"))
	if err != nil {
		return nil, err
	}
	vals, err := chartutil.ToRenderValues(ch, values,
		chartutil.ReleaseOptions{Name: "kurz", Namespace: ns, Revision: 1, IsInstall: true}, chartutil.DefaultCapabilities)
	if err != nil {
		return nil, err
	}
	files, err := engine.Engine{Strict: true}.Render(ch, vals)
	if err != nil {
		return nil, err
	}
	names := make([]string, 0, len(files))
	for name := range files {
		if strings.HasSuffix(name, ".yaml") && strings.TrimSpace(files[name]) != "" {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	var out strings.Builder
	for _, name := range names {
		out.WriteString("---\n# " + name + "\n" + files[name] + "\n")
	}
	return []byte(out.String()), nil
}

// TestChartDefaultsInstallWhatInstallYAMLDoes: with its default values the
// chart renders the objects of dist/install.yaml (so of config/default), the
// Namespace aside, differing only in Helm's labels, the CRDs' keep policy,
// the explicit imagePullPolicy and the order of the manager's flags; and
// kube-apiserver accepts every one.
func TestChartDefaultsInstallWhatInstallYAMLDoes(t *testing.T) {
	testenv.Need(t)
	g := NewWithT(t)
	rendered, err := renderChart("kurz-system", nil)
	g.Expect(err).NotTo(HaveOccurred())
	chartObjs := map[string]*unstructured.Unstructured{}
	for _, o := range decodeAll(t, rendered) {
		chartObjs[key(o)] = normalize(withoutConsoleSession(o))
	}
	// The console session key: the chart makes a random one; install.yaml
	// cannot (each replica then seals with its own, TestChartConsoleSession).
	g.Expect(chartObjs).To(HaveKey("Secret/" + consoleSecret))
	delete(chartObjs, "Secret/"+consoleSecret)

	want := map[string]*unstructured.Unstructured{}
	for _, o := range decodeAll(t, readInstallYAML(t)) {
		if o.GetKind() != "Namespace" {
			want[key(o)] = normalize(o)
		}
	}
	g.Expect(want).To(HaveKey("Deployment/kurz"))
	g.Expect(chartObjs).To(HaveLen(len(want)))
	for k, o := range want {
		g.Expect(chartObjs).To(HaveKey(k))
		g.Expect(cmp.Diff(o.Object, chartObjs[k].Object)).To(BeEmpty(), "%s: install.yaml (-) and chart (+) differ", k)
	}

	stored := dryRunApply(t, "kurz-system", rendered)
	for k := range want {
		g.Expect(stored).To(HaveKey(k), "kube-apiserver accepted %s", k)
	}
	g.Expect(stored["CustomResourceDefinition/links.kurz.dev"].GetAnnotations()).To(HaveKeyWithValue("helm.sh/resource-policy", "keep"))
}

// consoleSecret is the Secret of the console session key the chart makes.
const consoleSecret = "kurz-console-session"

// withoutConsoleSession drops the console session key's flag, volume and
// mount from the chart's Deployment.
func withoutConsoleSession(o *unstructured.Unstructured) *unstructured.Unstructured {
	if o.GetKind() != "Deployment" {
		return o
	}
	o = o.DeepCopy()
	spec := o.Object["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)
	spec["volumes"] = slices.DeleteFunc(spec["volumes"].([]any), func(v any) bool { return v.(map[string]any)["name"] == "console-session" })
	for _, c := range spec["containers"].([]any) {
		m := c.(map[string]any)
		m["volumeMounts"] = slices.DeleteFunc(m["volumeMounts"].([]any), func(v any) bool { return v.(map[string]any)["name"] == "console-session" })
		m["args"] = slices.DeleteFunc(m["args"].([]any), func(a any) bool {
			return strings.HasPrefix(a.(string), "--console-session-key-file=")
		})
	}
	return o
}

// TestChartConsoleSession: every replica mounts one console session key
// from a Secret the chart makes with a random key (or the operator's) and
// names it in --console-session-key-file; kube-apiserver accepts it.
func TestChartConsoleSession(t *testing.T) {
	testenv.Need(t)
	g := NewWithT(t)
	rendered, err := renderChart("links-prod", nil)
	g.Expect(err).NotTo(HaveOccurred())
	stored := dryRunApply(t, "links-prod", rendered)
	g.Expect(stored).To(HaveKey("Secret/" + consoleSecret))
	data, _, _ := unstructured.NestedStringMap(stored["Secret/"+consoleSecret].Object, "data")
	k, err := base64.StdEncoding.DecodeString(data["key"])
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(k).To(HaveLen(64), "a random key of 64 characters")
	again, err := renderChart("links-prod", nil)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(string(again)).NotTo(ContainSubstring(data["key"]), "random: not a key in the chart")

	check := func(stored map[string]*unstructured.Unstructured, secret string) {
		_, c := managerContainer(t, stored["Deployment/kurz"])
		g.Expect(c.Args).To(ContainElement("--console-session-key-file=/etc/kurz/console-session/key"))
		g.Expect(c.VolumeMounts).To(ContainElement(corev1.VolumeMount{Name: "console-session", MountPath: "/etc/kurz/console-session", ReadOnly: true}))
		vols, _, _ := unstructured.NestedSlice(stored["Deployment/kurz"].Object, "spec", "template", "spec", "volumes")
		g.Expect(vols).To(ContainElement(HaveKeyWithValue("secret", HaveKeyWithValue("secretName", secret))))
	}
	check(stored, consoleSecret)

	rendered, err = renderChart("links-prod", map[string]any{"consoleSession": map[string]any{"existingSecret": "ops-console-key"}})
	g.Expect(err).NotTo(HaveOccurred())
	stored = dryRunApply(t, "links-prod", rendered)
	g.Expect(stored).NotTo(HaveKey("Secret/" + consoleSecret))
	check(stored, "ops-console-key")
}

// normalize drops what the chart adds to config/'s objects, and sorts the
// manager's flags (the chart appends the ones its values own).
func normalize(o *unstructured.Unstructured) *unstructured.Unstructured {
	o = o.DeepCopy()
	labels := o.GetLabels()
	delete(labels, "app.kubernetes.io/managed-by")
	delete(labels, "helm.sh/chart")
	o.SetLabels(labels)
	ann := o.GetAnnotations()
	delete(ann, "helm.sh/resource-policy")
	o.SetAnnotations(ann)
	for _, field := range []string{"labels", "annotations"} {
		if m, _, _ := unstructured.NestedMap(o.Object, "metadata", field); len(m) == 0 {
			unstructured.RemoveNestedField(o.Object, "metadata", field)
		}
	}
	if o.GetKind() == "Deployment" {
		containers, _, _ := unstructured.NestedSlice(o.Object, "spec", "template", "spec", "containers")
		for _, c := range containers {
			m := c.(map[string]any)
			delete(m, "imagePullPolicy")
			args := m["args"].([]any)
			slices.SortFunc(args[1:], func(a, b any) int { return strings.Compare(a.(string), b.(string)) })
		}
		_ = unstructured.SetNestedSlice(o.Object, containers, "spec", "template", "spec", "containers")
	}
	return o
}

// TestChartValuesReachTheCluster renders the chart with every value set to
// something other than its default, has kube-apiserver dry-run apply it, and
// checks each value in the objects it would store.
func TestChartValuesReachTheCluster(t *testing.T) {
	testenv.Need(t)
	cookieKey := "c2lnbmluZy1rZXktb2YtdGhlLXRlc3Q="
	for _, tc := range []struct {
		name   string
		values map[string]any
		check  func(g *WithT, stored map[string]*unstructured.Unstructured, args []string, c corev1.Container)
	}{{
		name: "every value",
		// As `helm install -f`: numbers from YAML are float64 to the templates.
		values: valuesFile(`
image: {repository: registry.example.com/team/kurz, tag: v1.2.3, pullPolicy: Always}
replicas: 3
resources:
  requests: {cpu: 250m, memory: 256Mi}
  limits: {memory: 512Mi}
trustedProxies: [10.0.0.0/8, 192.168.0.0/16]
cookieSecret: {value: ` + cookieKey + `}
redirectTargets: [go.example.com, 203.0.113.7]
dnsServer: 10.96.0.10:53
clickFlushInterval: 30s
clickSpoolSizeLimit: 256Mi
metrics: {enable: true, port: 9090, service: {enable: false}}
leaderElection: {enable: false}
crds: {install: false}
ingress: {className: nginx, annotations: {cert-manager.io/cluster-issuer: letsencrypt, nginx.ingress.kubernetes.io/ssl-redirect: "true"}, gracePeriod: 2h}
extraArgs: [--redirect-status=301, --api-trusted-proxies=10.0.0.0/8]
`),
		check: func(g *WithT, stored map[string]*unstructured.Unstructured, args []string, c corev1.Container) {
			g.Expect(c.Image).To(Equal("registry.example.com/team/kurz:v1.2.3"))
			g.Expect(c.ImagePullPolicy).To(Equal(corev1.PullAlways))
			g.Expect(c.Resources.Requests).To(Equal(corev1.ResourceList{
				corev1.ResourceCPU: resource.MustParse("250m"), corev1.ResourceMemory: resource.MustParse("256Mi")}))
			g.Expect(c.Resources.Limits).To(Equal(corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("512Mi")}))
			g.Expect(args).To(ContainElements(
				"--redirect-trusted-proxies=10.0.0.0/8,192.168.0.0/16",
				"--redirect-target=go.example.com", "--redirect-target=203.0.113.7",
				"--dns-server=10.96.0.10:53", "--click-flush-interval=30s",
				"--metrics-bind-address=:9090",
				"--redirect-status=301", "--api-trusted-proxies=10.0.0.0/8",
				"--ingress-class=nginx", "--route-grace-period=2h",
				"--ingress-annotation=cert-manager.io/cluster-issuer=letsencrypt",
				"--ingress-annotation=nginx.ingress.kubernetes.io/ssl-redirect=true"))
			g.Expect(args).NotTo(ContainElement(HavePrefix("--leader-elect")))
			// The spool's bound and its volume's size: one value.
			g.Expect(args).To(ContainElement("--click-spool-size-limit=$(KURZ_CLICK_SPOOL_SIZE_LIMIT)"))
			g.Expect(c.Env).To(ContainElement(corev1.EnvVar{Name: "KURZ_CLICK_SPOOL_SIZE_LIMIT", Value: "256Mi"}))
			volumes, _, _ := unstructured.NestedSlice(stored["Deployment/kurz"].Object, "spec", "template", "spec", "volumes")
			g.Expect(volumes).To(ContainElement(HaveKeyWithValue("emptyDir", HaveKeyWithValue("sizeLimit", "256Mi"))))
			g.Expect(c.Ports).To(ContainElement(corev1.ContainerPort{Name: "metrics", ContainerPort: 9090, Protocol: corev1.ProtocolTCP}))
			g.Expect(cookieSecretRef(c)).To(Equal("kurz-redirect-cookie"))
			g.Expect(stored).To(HaveKey("Secret/kurz-redirect-cookie"))
			data, _, _ := unstructured.NestedString(stored["Secret/kurz-redirect-cookie"].Object, "data", "secret")
			g.Expect(base64.StdEncoding.DecodeString(data)).To(BeEquivalentTo(cookieKey))
			g.Expect(stored).NotTo(HaveKey("Service/kurz-metrics"))
			g.Expect(stored).NotTo(HaveKey("CustomResourceDefinition/links.kurz.dev"))
		},
	}, {
		name: "existing cookie Secret, metrics off",
		values: map[string]any{
			"cookieSecret": map[string]any{"existingSecret": "links-cookie-key"},
			"metrics":      map[string]any{"enable": false},
		},
		check: func(g *WithT, stored map[string]*unstructured.Unstructured, args []string, c corev1.Container) {
			g.Expect(cookieSecretRef(c)).To(Equal("links-cookie-key"))
			g.Expect(stored).NotTo(HaveKey(HavePrefix("Secret/kurz-redirect")), "no cookie Secret of the chart's")
			g.Expect(args).To(ContainElements("--metrics-bind-address=0", "--leader-elect"))
			g.Expect(stored).NotTo(HaveKey("Service/kurz-metrics"))
			g.Expect(stored).To(HaveKey("CustomResourceDefinition/links.kurz.dev"))
			g.Expect(stored).To(HaveKey("CustomResourceDefinition/domains.kurz.dev"))
			g.Expect(stored).To(HaveKey("CustomResourceDefinition/webhooks.kurz.dev"))
			g.Expect(args).NotTo(ContainElement(HavePrefix("--ingress-")), "no Ingresses unless a class is given")
		},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			rendered, err := renderChart("links-prod", tc.values)
			g.Expect(err).NotTo(HaveOccurred())
			stored := dryRunApply(t, "links-prod", rendered)
			g.Expect(stored).To(HaveKey("Deployment/kurz"))
			g.Expect(stored).To(HaveKey("Service/kurz-redirect"))
			g.Expect(stored).To(HaveKey("ClusterRole/kurz-manager"))

			replicas, c := managerContainer(t, stored["Deployment/kurz"])
			if r, ok := tc.values["replicas"]; ok {
				g.Expect(replicas).To(BeEquivalentTo(r))
			}
			// config/'s own flags stay, the subcommand first.
			g.Expect(c.Args[0]).To(Equal("manager"))
			g.Expect(c.Args).To(ContainElements("--api-bind-address=:8080", "--redirect-bind-address=:8081"))
			tc.check(g, stored, c.Args, c)

			// Everything namespaced lands in the release namespace, and the
			// bindings name the ServiceAccount there.
			for k, o := range stored {
				if o.GetNamespace() != "" {
					g.Expect(o.GetNamespace()).To(Equal("links-prod"), k)
				}
			}
			subjects, _, _ := unstructured.NestedSlice(stored["ClusterRoleBinding/kurz-manager"].Object, "subjects")
			g.Expect(subjects).To(ConsistOf(HaveKeyWithValue("namespace", "links-prod")))
			// Ingresses, Secrets and Certificates: a Role in the release
			// namespace, bound to the ServiceAccount there.
			g.Expect(stored).To(HaveKey("Role/kurz-manager"))
			subjects, _, _ = unstructured.NestedSlice(stored["RoleBinding/kurz-manager"].Object, "subjects")
			g.Expect(subjects).To(ConsistOf(HaveKeyWithValue("namespace", "links-prod")))
		})
	}
}

// TestChartServiceMonitor: metrics.serviceMonitor.enabled adds config/prometheus's
// ServiceMonitor in the release namespace, which kube-apiserver accepts with
// the Prometheus Operator's CRD installed (vendored in
// config/prometheus/testdata); it is off by default and with metrics off.
func TestChartServiceMonitor(t *testing.T) {
	testenv.Need(t)
	g := NewWithT(t)
	_, err := envtest.InstallCRDs(env.Config, envtest.CRDInstallOptions{
		Paths:              []string{filepath.Join(testenv.RepoRoot(), "config", "prometheus", "testdata")},
		ErrorIfPathMissing: true,
	})
	g.Expect(err).NotTo(HaveOccurred())
	on := map[string]any{"metrics": map[string]any{"serviceMonitor": map[string]any{"enabled": true}}}
	rendered, err := renderChart("links-prod", on)
	g.Expect(err).NotTo(HaveOccurred())
	stored := dryRunApply(t, "links-prod", rendered)
	g.Expect(stored).To(HaveKey("ServiceMonitor/kurz-metrics-monitor"))
	monitor := stored["ServiceMonitor/kurz-metrics-monitor"]
	g.Expect(monitor.GetNamespace()).To(Equal("links-prod"))
	endpoints, _, _ := unstructured.NestedSlice(monitor.Object, "spec", "endpoints")
	g.Expect(endpoints).To(ConsistOf(And(HaveKeyWithValue("port", "https"), HaveKeyWithValue("scheme", "https"))))
	g.Expect(stored).To(HaveKey("Service/kurz-metrics"))
	g.Expect(stored["Service/kurz-metrics"].GetLabels()).To(HaveKeyWithValue("app.kubernetes.io/component", "metrics"))

	for _, values := range []map[string]any{nil, {"metrics": map[string]any{"enable": false, "serviceMonitor": map[string]any{"enabled": true}}}} {
		rendered, err := renderChart("links-prod", values)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(string(rendered)).NotTo(ContainSubstring("kind: ServiceMonitor"), "values %v", values)
	}
}

// TestChartRefusesBadValues: values the chart cannot honour fail the render
// with an error naming the value, before anything reaches the cluster.
func TestChartRefusesBadValues(t *testing.T) {
	for _, tc := range []struct {
		name   string
		values map[string]any
		want   string
	}{
		{"two cookie secrets", map[string]any{"cookieSecret": map[string]any{"existingSecret": "links-cookie-key", "value": "abc"}},
			"cookieSecret: set existingSecret or value, not both"},
		{"replicas not a number", map[string]any{"replicas": "three"}, "replicas"},
		{"misspelt value", map[string]any{"redirectTarget": []any{"go.example.com"}}, "redirectTarget"},
		{"bad pull policy", map[string]any{"image": map[string]any{"pullPolicy": "Sometimes"}}, "pullPolicy"},
		{"metrics port out of range", map[string]any{"metrics": map[string]any{"port": 70000}}, "port"},
		{"extraArgs not a list", map[string]any{"extraArgs": "--redirect-status=301"}, "extraArgs"},
		{"sqlite with two replicas", map[string]any{"analytics": map[string]any{"enabled": true, "store": map[string]any{"type": "sqlite"}}},
			"analytics.store.type sqlite needs replicas: 1, not 2: the SQLite file lives on a ReadWriteOnce PersistentVolume"},
		{"sqlite without a volume", map[string]any{"replicas": 1, "analytics": map[string]any{"enabled": true, "store": map[string]any{"type": "sqlite", "sqlite": map[string]any{"size": ""}}}},
			"analytics.store.type sqlite needs a PersistentVolume"},
		{"postgres without its Secret", map[string]any{"analytics": map[string]any{"enabled": true}},
			"analytics.store.type postgres needs analytics.store.postgres.secretName"},
		{"geoip file without a volume", map[string]any{"analytics": map[string]any{"enabled": true, "store": map[string]any{"type": ""}, "geoip": map[string]any{"file": "GeoLite2-City.mmdb"}}},
			"analytics.geoip.file needs analytics.geoip.volume"},
		{"unknown store", map[string]any{"analytics": map[string]any{"store": map[string]any{"type": "mysql"}}}, "type"},
		{"misspelt serviceMonitor switch", map[string]any{"metrics": map[string]any{"serviceMonitor": map[string]any{"enable": true}}}, "enable"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := renderChart("links-prod", tc.values)
			NewWithT(t).Expect(err).To(MatchError(ContainSubstring(tc.want)))
		})
	}
}

// valuesFile parses a values file as Helm does.
func valuesFile(text string) map[string]any {
	v, err := chartutil.ReadValues([]byte(text))
	if err != nil {
		panic(err)
	}
	return v
}

// cookieSecretRef is the Secret the container's KURZ_REDIRECT_COOKIE_SECRET
// comes from.
func cookieSecretRef(c corev1.Container) string {
	for _, e := range c.Env {
		if e.Name == "KURZ_REDIRECT_COOKIE_SECRET" && e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil {
			return e.ValueFrom.SecretKeyRef.Name
		}
	}
	return ""
}

// TestChartAnalytics: analytics.* set the manager's analytics flags, the
// PostgreSQL URL and OTLP headers from Secrets (never in the args as
// written), the GeoIP volume, and for sqlite a PersistentVolumeClaim and
// the Recreate strategy; kube-apiserver accepts every object. Off by
// default (TestChartDefaultsInstallWhatInstallYAMLDoes).
func TestChartAnalytics(t *testing.T) {
	testenv.Need(t)
	secretRef := func(c corev1.Container, name string) *corev1.SecretKeySelector {
		for _, e := range c.Env {
			if e.Name == name && e.ValueFrom != nil {
				return e.ValueFrom.SecretKeyRef
			}
		}
		return nil
	}
	t.Run("postgres, geoip, otlp", func(t *testing.T) {
		g := NewWithT(t)
		rendered, err := renderChart("links-prod", valuesFile(`
analytics:
  enabled: true
  store: {type: postgres, postgres: {secretName: analytics-db-app, secretKey: uri}}
  retention: 2160h
  geoip: {file: GeoLite2-City.mmdb, volume: {persistentVolumeClaim: {claimName: geoip}}}
  otlp: {endpoint: "http://otel-collector.observability:4318", headersSecret: {name: otlp-auth, key: headers}}
`))
		g.Expect(err).NotTo(HaveOccurred())
		stored := dryRunApply(t, "links-prod", rendered)
		_, c := managerContainer(t, stored["Deployment/kurz"])
		g.Expect(c.Args).To(ContainElements("--analytics", "--analytics-retention=2160h",
			"--geoip-database=/var/lib/kurz-geoip/GeoLite2-City.mmdb", "--analytics-otlp-endpoint=http://otel-collector.observability:4318"))
		// The URL (with its password) comes from the env var, not argv.
		g.Expect(c.Args).NotTo(ContainElement(HavePrefix("--analytics-store")))
		g.Expect(secretRef(c, "KURZ_ANALYTICS_STORE")).To(Equal(&corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "analytics-db-app"}, Key: "uri"}))
		g.Expect(secretRef(c, "OTEL_EXPORTER_OTLP_HEADERS")).To(Equal(&corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "otlp-auth"}, Key: "headers"}))
		g.Expect(c.VolumeMounts).To(ContainElement(corev1.VolumeMount{Name: "geoip", MountPath: "/var/lib/kurz-geoip", ReadOnly: true}))
		volumes, _, _ := unstructured.NestedSlice(stored["Deployment/kurz"].Object, "spec", "template", "spec", "volumes")
		g.Expect(volumes).To(ContainElement(And(HaveKeyWithValue("name", "geoip"), HaveKeyWithValue("persistentVolumeClaim", HaveKeyWithValue("claimName", "geoip")))))
		strategy, _, _ := unstructured.NestedString(stored["Deployment/kurz"].Object, "spec", "strategy", "type")
		g.Expect(strategy).To(Equal("RollingUpdate"), "several replicas keep zero-drop rollouts")
		g.Expect(stored).NotTo(HaveKey("PersistentVolumeClaim/kurz-analytics"))
	})
	t.Run("sqlite", func(t *testing.T) {
		g := NewWithT(t)
		rendered, err := renderChart("links-prod", valuesFile(`
replicas: 1
analytics:
  enabled: true
  store: {type: sqlite, sqlite: {size: 20Gi, storageClassName: fast}}
`))
		g.Expect(err).NotTo(HaveOccurred())
		stored := dryRunApply(t, "links-prod", rendered)
		_, c := managerContainer(t, stored["Deployment/kurz"])
		g.Expect(c.Args).To(ContainElements("--analytics", "--analytics-store=/var/lib/kurz-analytics/analytics.db"))
		g.Expect(c.Args).NotTo(ContainElement(HavePrefix("--analytics-otlp-endpoint")))
		g.Expect(secretRef(c, "KURZ_ANALYTICS_STORE")).To(BeNil())
		g.Expect(c.VolumeMounts).To(ContainElement(corev1.VolumeMount{Name: "analytics", MountPath: "/var/lib/kurz-analytics"}))
		strategy, _, _ := unstructured.NestedMap(stored["Deployment/kurz"].Object, "spec", "strategy")
		g.Expect(strategy).To(Equal(map[string]any{"type": "Recreate"}))
		g.Expect(stored).To(HaveKey("PersistentVolumeClaim/kurz-analytics"))
		pvc := stored["PersistentVolumeClaim/kurz-analytics"]
		size, _, _ := unstructured.NestedString(pvc.Object, "spec", "resources", "requests", "storage")
		class, _, _ := unstructured.NestedString(pvc.Object, "spec", "storageClassName")
		g.Expect([]string{size, class}).To(Equal([]string{"20Gi", "fast"}))
		g.Expect(pvc.GetAnnotations()).To(HaveKeyWithValue("helm.sh/resource-policy", "keep"))
	})
}
