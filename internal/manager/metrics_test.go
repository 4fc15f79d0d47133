package manager

import (
	"bufio"
	"context"
	"crypto/tls"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	mdns "github.com/miekg/dns"
	. "github.com/onsi/gomega"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	certutil "k8s.io/client-go/util/cert"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	kurzv1alpha1 "github.com/kurz-dev/kurz/api/v1alpha1"
	"github.com/kurz-dev/kurz/internal/gauges"
	"github.com/kurz-dev/kurz/internal/testenv"
	"github.com/kurz-dev/kurz/internal/version"
)

// scrapeClient trusts the manager's self-signed certificate: the test is
// about who may read, not about the certificate.
var scrapeClient = &http.Client{
	Timeout:   10 * time.Second,
	Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}, //nolint:gosec // self-signed test server
}

// scrape GETs https://addr/metrics with token (none if empty), and returns
// the status and, on 200, the samples by "name{labels}".
func scrape(addr, token string) (int, map[string]float64, error) {
	req, err := http.NewRequest(http.MethodGet, "https://"+addr+"/metrics", nil)
	if err != nil {
		return 0, nil, err
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := scrapeClient.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return resp.StatusCode, nil, nil
	}
	samples := map[string]float64{}
	s := bufio.NewScanner(resp.Body)
	s.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for s.Scan() {
		line := s.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		v, err := strconv.ParseFloat(line[i+1:], 64)
		if err != nil {
			return 0, nil, fmt.Errorf("%q: %w", line, err)
		}
		samples[line[:i]] = v
	}
	return resp.StatusCode, samples, s.Err()
}

// tokenOf creates ServiceAccount ns/name and returns a token of it for
// kube-apiserver's own audience (what a pod mounts, and Prometheus sends).
func tokenOf(t *testing.T, ns, name string) string {
	t.Helper()
	g := NewWithT(t)
	g.Expect(k8sClient.Create(context.Background(), &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}})).To(Succeed())
	cs, err := kubernetes.NewForConfig(cfg)
	g.Expect(err).NotTo(HaveOccurred())
	tr, err := cs.CoreV1().ServiceAccounts(ns).CreateToken(context.Background(), name, &authenticationv1.TokenRequest{
		Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](3600)},
	}, metav1.CreateOptions{})
	g.Expect(err).NotTo(HaveOccurred())
	return tr.Status.Token
}

// applyMetricsReader creates config/rbac's kurz-metrics-reader (the file
// users apply) and binds it to ServiceAccount ns/sa.
func applyMetricsReader(t *testing.T, ns, sa string) {
	t.Helper()
	g := NewWithT(t)
	ctx := context.Background()
	b, err := os.ReadFile(filepath.Join(testenv.RepoRoot(), "config", "rbac", "metrics_reader_role.yaml"))
	g.Expect(err).NotTo(HaveOccurred())
	role := &rbacv1.ClusterRole{}
	g.Expect(yaml.Unmarshal(b, role)).To(Succeed())
	if err := k8sClient.Create(ctx, role); err != nil {
		g.Expect(client.IgnoreAlreadyExists(err)).To(Succeed())
	}
	binding := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: unique("metrics-reader")},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role.Name},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: ns, Name: sa}}}
	g.Expect(k8sClient.Create(ctx, binding)).To(Succeed())
	t.Cleanup(func() { _ = k8sClient.Delete(context.Background(), binding) })
}

// statesFromAPI counts every Link and Domain of the cluster by state, read
// from kube-apiserver: what the gauges, read from the cache, must say.
func statesFromAPI(g Gomega, ns string) (all, inNS map[string]float64) {
	all, inNS = map[string]float64{}, map[string]float64{}
	count := func(gauge, namespace, state string) {
		k := fmt.Sprintf(`%s{state=%q}`, gauge, state)
		all[k]++
		if namespace == ns {
			inNS[k]++
		}
	}
	var links kurzv1alpha1.LinkList
	g.Expect(k8sClient.List(context.Background(), &links)).To(Succeed())
	for _, l := range links.Items {
		count("kurz_links", l.Namespace, gauges.LinkState(l.Status.Conditions))
	}
	var domains kurzv1alpha1.DomainList
	g.Expect(k8sClient.List(context.Background(), &domains)).To(Succeed())
	for _, d := range domains.Items {
		count("kurz_domains", d.Namespace, gauges.DomainState(d.Status.Conditions))
	}
	return all, inNS
}

// stateGauges keeps the kurz_links and kurz_domains samples that are not 0.
func stateGauges(samples map[string]float64) map[string]float64 {
	out := map[string]float64{}
	for k, v := range samples {
		if (strings.HasPrefix(k, "kurz_links{") || strings.HasPrefix(k, "kurz_domains{")) && v != 0 {
			out[k] = v
		}
	}
	return out
}

// TestMetricsNeedAnAuthorizedToken: /metrics is served over HTTPS; without
// a token the answer is 401, with the token of a ServiceAccount not bound
// to kurz-metrics-reader 403, and with one bound to it 200 with the build
// and the Links and Domains by state, which follow creates and deletes.
func TestMetricsNeedAnAuthorizedToken(t *testing.T) {
	testenv.Need(t)
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	dns := newDNS(t)
	o := testOptions(t, dns, ns)
	o.MetricsBindAddress = testenv.FreeAddr(t)
	g.Expect(o.MetricsSecure).To(BeTrue(), "secure by default")
	m, err := New(ctx, cfg, o)
	g.Expect(err).NotTo(HaveOccurred())
	start(t, m, (*Manager).Start)

	reader := tokenOf(t, ns, "prometheus")
	applyMetricsReader(t, ns, "prometheus")
	stranger := tokenOf(t, ns, "stranger")

	status := func(token string) func() (int, error) {
		return func() (int, error) {
			code, _, err := scrape(o.MetricsBindAddress, token)
			return code, err
		}
	}
	g.Eventually(status(""), timeout, poll).Should(Equal(http.StatusUnauthorized))
	g.Expect(status("not-a-token")()).To(Equal(http.StatusUnauthorized))
	g.Expect(status(stranger)()).To(Equal(http.StatusForbidden))
	// RBAC learns of the binding through an informer: poll.
	g.Eventually(status(reader), timeout, poll).Should(Equal(http.StatusOK))

	v := version.Get()
	// The state gauges appear once the caches have synced.
	g.Eventually(func(g Gomega) {
		_, samples, err := scrape(o.MetricsBindAddress, reader)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(samples).To(HaveKeyWithValue(
			fmt.Sprintf(`kurz_build_info{commit=%q,goversion=%q,version=%q}`, v.Commit, v.GoVersion, v.Version), 1.0))
		for _, s := range gauges.LinkStates {
			g.Expect(samples).To(HaveKey(fmt.Sprintf(`kurz_links{state=%q}`, s)), "every state is exported, 0 included")
		}
		for _, s := range gauges.DomainStates {
			g.Expect(samples).To(HaveKey(fmt.Sprintf(`kurz_domains{state=%q}`, s)))
		}
		g.Expect(samples).To(HaveKeyWithValue("kurz_clicks_pending", 0.0))
		g.Expect(samples).To(HaveKeyWithValue("kurz_clicks_pending_links", 0.0))
	}, timeout, poll).Should(Succeed())

	// One object in each state the controllers reach without DNS tricks.
	verified, pending := unique("ok")+".test", unique("wait")+".test"
	dns.Set(verified, mdns.TypeA, targetIP)
	createDomain(t, ns, "verified", verified)
	createDomain(t, ns, "pending", pending)
	createLink(t, ns, "active", verified, "a")
	createLink(t, ns, "nodomain", unique("none")+".test", "a")
	expired := &kurzv1alpha1.Link{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "expired"},
		Spec: kurzv1alpha1.LinkSpec{Domain: kurzv1alpha1.Hostname(verified), Key: "old",
			URL: "https://example.com/old", ExpiresAt: &metav1.Time{Time: time.Now().Add(-time.Hour)}}}
	g.Expect(k8sClient.Create(ctx, expired)).To(Succeed())
	// Created after "active" (and named after it, for a tie within the
	// second), so it is the younger of the two and conflicts.
	createLink(t, ns, "conflict", verified, "a")

	wantNS := map[string]float64{
		`kurz_links{state="active"}`: 1, `kurz_links{state="expired"}`: 1,
		`kurz_links{state="conflict"}`: 1, `kurz_links{state="domain_not_found"}`: 1,
		`kurz_domains{state="verified"}`: 1, `kurz_domains{state="pending"}`: 1,
	}
	g.Eventually(func(g Gomega) {
		all, inNS := statesFromAPI(g, ns)
		g.Expect(inNS).To(Equal(wantNS))
		_, samples, err := scrape(o.MetricsBindAddress, reader)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(stateGauges(samples)).To(Equal(all))
	}, timeout, poll).Should(Succeed())

	// Deletes are counted out: the gauges are the cache's, not a tally.
	for _, name := range []string{"active", "expired"} {
		g.Expect(k8sClient.Delete(ctx, &kurzv1alpha1.Link{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}})).To(Succeed())
	}
	g.Expect(k8sClient.Delete(ctx, &kurzv1alpha1.Domain{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "pending"}})).To(Succeed())
	g.Eventually(func(g Gomega) {
		all, inNS := statesFromAPI(g, ns)
		// The conflict is resolved: the younger Link now serves.
		g.Expect(inNS).To(Equal(map[string]float64{
			`kurz_links{state="active"}`: 1, `kurz_links{state="domain_not_found"}`: 1,
			`kurz_domains{state="verified"}`: 1,
		}))
		_, samples, err := scrape(o.MetricsBindAddress, reader)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(stateGauges(samples)).To(Equal(all))
	}, timeout, poll).Should(Succeed())
}

// TestMetricsServeTheGivenCertificate: with --metrics-cert-path the server
// presents that certificate, not a self-signed one of its own.
func TestMetricsServeTheGivenCertificate(t *testing.T) {
	testenv.Need(t)
	g := NewWithT(t)
	dir := t.TempDir()
	crt, key, err := certutil.GenerateSelfSignedCertKey("kurz-metrics.test", nil, nil)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(os.WriteFile(filepath.Join(dir, "tls.crt"), crt, 0o600)).To(Succeed())
	g.Expect(os.WriteFile(filepath.Join(dir, "tls.key"), key, 0o600)).To(Succeed())

	ns := newNamespace(t)
	o := testOptions(t, newDNS(t), ns)
	o.EnableControllers = false
	o.MetricsBindAddress = testenv.FreeAddr(t)
	o.MetricsCertPath = dir
	m, err := New(context.Background(), cfg, o)
	g.Expect(err).NotTo(HaveOccurred())
	start(t, m, (*Manager).Start)

	g.Eventually(func() ([]string, error) {
		conn, err := tls.Dial("tcp", o.MetricsBindAddress, &tls.Config{InsecureSkipVerify: true}) //nolint:gosec // the certificate is what is looked at
		if err != nil {
			return nil, err
		}
		defer conn.Close()
		return conn.ConnectionState().PeerCertificates[0].DNSNames, nil
	}, timeout, poll).Should(ContainElement("kurz-metrics.test"))
}
