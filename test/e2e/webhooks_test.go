package e2e

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	mdns "github.com/miekg/dns"
	. "github.com/onsi/gomega"

	"github.com/kurz-dev/kurz/internal/dns/dnstest"
	"github.com/kurz-dev/kurz/internal/testenv"
)

// hookReceiver is a webhook receiver as a user would run one: an HTTPS
// server with a certificate of its own CA (httptest's), which kurz dev
// trusts through --webhook-ca-file, as docs/webhooks.md says.
type hookReceiver struct {
	srv *httptest.Server
	mu  sync.Mutex
	got []hookRequest
}

type hookRequest struct {
	id, timestamp, signature string
	body                     []byte
	typ                      string
	data                     json.RawMessage
}

func newHookReceiver(t *testing.T) *hookReceiver {
	rc := &hookReceiver{}
	rc.srv = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var p struct {
			Type string          `json:"type"`
			Data json.RawMessage `json:"data"`
		}
		_ = json.Unmarshal(body, &p)
		rc.mu.Lock()
		rc.got = append(rc.got, hookRequest{id: r.Header.Get("webhook-id"), timestamp: r.Header.Get("webhook-timestamp"),
			signature: r.Header.Get("webhook-signature"), body: body, typ: p.Type, data: p.Data})
		rc.mu.Unlock()
	}))
	t.Cleanup(rc.srv.Close)
	return rc
}

func (rc *hookReceiver) ofType(typ string) []hookRequest {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	var out []hookRequest
	for _, r := range rc.got {
		if r.typ == typ {
			out = append(out, r)
		}
	}
	return out
}

func (rc *hookReceiver) all() []hookRequest {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]hookRequest(nil), rc.got...)
}

// verifyStandardWebhook checks a request as the Standard Webhooks
// specification says, written here apart from kurz's code: the key is the
// base64 after "whsec_", the signed content id.timestamp.body, the MAC
// HMAC-SHA256, the header a space separated list of "v1,<base64>"; the
// timestamp is within 5 minutes.
func verifyStandardWebhook(secret string, r hookRequest) error {
	key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, "whsec_"))
	if err != nil {
		return err
	}
	ts, err := strconv.ParseInt(r.timestamp, 10, 64)
	if err != nil {
		return fmt.Errorf("webhook-timestamp %q: %w", r.timestamp, err)
	}
	if d := time.Since(time.Unix(ts, 0)); d > 5*time.Minute || d < -5*time.Minute {
		return fmt.Errorf("webhook-timestamp %d is %s off", ts, d)
	}
	m := hmac.New(sha256.New, key)
	m.Write([]byte(r.id + "." + r.timestamp + "."))
	m.Write(r.body)
	want := "v1," + base64.StdEncoding.EncodeToString(m.Sum(nil))
	for _, sig := range strings.Fields(r.signature) {
		if hmac.Equal([]byte(sig), []byte(want)) {
			return nil
		}
	}
	return fmt.Errorf("no valid signature in %q for %s", r.signature, r.id)
}

// firstWebhookScript is the first sh block of docs/webhooks.md ("A first
// Webhook"), with the receiver's URL for the example's and, so that every
// event type comes, all nine events for the example's five.
func firstWebhookScript(t *testing.T, url string) string {
	t.Helper()
	doc, err := os.ReadFile(filepath.Join(testenv.RepoRoot(), "docs", "webhooks.md"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile("(?s)## A first Webhook.*?```sh\n(.*?)```").FindSubmatch(doc)
	if m == nil {
		t.Fatal("docs/webhooks.md: no sh block under \"A first Webhook\"")
	}
	script := string(m[1])
	for old, repl := range map[string]string{
		"https://hooks.example.com/kurz": url,
		"events: [link.created, link.updated, link.deleted, link.clicked, domain.verified]": "events: [link.created, link.updated, link.deleted, link.clicked, link.expired, link.conflict, domain.verified, domain.unverified, domain.tls_ready]",
	} {
		if !strings.Contains(script, old) {
			t.Fatalf("docs/webhooks.md's first Webhook no longer has %q; update this test", old)
		}
		script = strings.Replace(script, old, repl, 1)
	}
	return script
}

// TestWebhooksAsDocumented follows docs/webhooks.md on a kurz dev of its
// own: the signing Secret and the Webhook made by the page's commands
// (kubectl), a local HTTPS receiver trusted with --webhook-ca-file, and
// every event type from a real change: Links through the API and kubectl,
// a real redirect, an expiry, a key conflict, a Domain verified against a
// DNS server on loopback (--dns-server, as docs/https.md does with
// hack/dev-dns), its certificate Secret, and its record removed.
func TestWebhooksAsDocumented(t *testing.T) {
	g := NewWithT(t)
	kurzBin(t) // kubectlBin
	dns := dnstest.Start(t)
	rc := newHookReceiver(t)
	caPath := filepath.Join(t.TempDir(), "receiver-ca.pem")
	g.Expect(os.WriteFile(caPath, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: rc.srv.Certificate().Raw}), 0o600)).To(Succeed())

	dir, err := os.MkdirTemp("", "kurz-e2e-webhooks-")
	g.Expect(err).NotTo(HaveOccurred())
	k := startKurzDev(t, dir, testenv.FreeAddr(t), testenv.FreeAddr(t),
		"--webhook-ca-file", caPath,
		"--dns-server", dns.Addr, "--dns-recheck-interval", "1s", "--dns-pending-backoff", "1s", "--dns-pending-backoff-max", "2s",
		"--ingress-class", "nginx")
	t.Cleanup(func() {
		if err := k.stop(t, syscall.SIGTERM); err != nil {
			t.Errorf("kurz dev exited after SIGTERM: %v\n%s", err, k.log)
		}
		_ = os.RemoveAll(dir)
	})

	// The page's commands, run as a user runs them, with kurz dev's
	// kubeconfig and kubectl on the PATH.
	cmd := exec.Command("bash", "-euo", "pipefail", "-c", firstWebhookScript(t, rc.srv.URL+"/kurz"))
	cmd.Env = append(os.Environ(), "KUBECONFIG="+filepath.Join(dir, "kubeconfig"), "PATH="+filepath.Dir(kubectlBin)+":"+os.Getenv("PATH"))
	out, err := cmd.CombinedOutput()
	g.Expect(err).NotTo(HaveOccurred(), "the commands of \"A first Webhook\":\n%s", out)
	g.Eventually(func() string {
		out, _ := k.kubectl("", "get", "webhooks")
		return out
	}).WithTimeout(time.Minute).Should(MatchRegexp(`(?m)^crm\s+True\s+Subscribed\s+127\.0\.0\.1\s+\["link.created",`), "kubectl get webhooks as the page shows it")
	enc, err := k.kubectl("", "get", "secret", "webhook-signing", "-o", "jsonpath={.data.secret}")
	g.Expect(err).NotTo(HaveOccurred(), enc)
	raw, err := base64.StdEncoding.DecodeString(enc)
	g.Expect(err).NotTo(HaveOccurred())
	secret := string(raw)
	g.Expect(secret).To(HavePrefix("whsec_"))

	// one waits for exactly one event of typ, verifies it and returns its data.
	one := func(typ string) map[string]any {
		g.Eventually(func() []hookRequest { return rc.ofType(typ) }).WithTimeout(time.Minute).WithPolling(100*time.Millisecond).
			Should(HaveLen(1), "one %s", typ)
		r := rc.ofType(typ)[0]
		g.Expect(verifyStandardWebhook(secret, r)).To(Succeed())
		var data map[string]any
		g.Expect(json.Unmarshal(r.data, &data)).To(Succeed())
		return data
	}

	// A Domain, verified by its TXT record; then its certificate.
	host := "hooks.e2e.example"
	d := k.must(t, http.StatusCreated, http.MethodPost, "/api/v1/domains", map[string]any{"domain": host})
	rec := d["dns_record"].(map[string]any)
	dns.Set(rec["name"].(string), mdns.TypeTXT, rec["value"].(string))
	g.Expect(one("domain.verified")).To(HaveKeyWithValue("domain", host))
	certPEM, keyPEM := testenv.SelfSignedCert(t, host, time.Now().Add(-time.Hour), time.Now().Add(90*24*time.Hour))
	certFile, keyFile := filepath.Join(t.TempDir(), "tls.crt"), filepath.Join(t.TempDir(), "tls.key")
	g.Expect(os.WriteFile(certFile, certPEM, 0o600)).To(Succeed())
	g.Expect(os.WriteFile(keyFile, keyPEM, 0o600)).To(Succeed())
	out2, err := k.kubectl("", "create", "secret", "tls", "kurz-tls-"+host, "--cert", certFile, "--key", keyFile)
	g.Expect(err).NotTo(HaveOccurred(), out2)
	g.Expect(one("domain.tls_ready")).To(HaveKeyWithValue("domain", host))

	// Links of the selected tag through the API: created, edited, clicked.
	a := k.must(t, http.StatusCreated, http.MethodPost, "/api/v1/links", map[string]any{
		"domain": host, "key": "welcome", "url": "https://example.com/welcome", "tags": []string{"onboarding"},
	})
	g.Expect(one("link.created")).To(HaveKeyWithValue("id", a["id"]))
	k.must(t, http.StatusOK, http.MethodPut, "/api/v1/links/"+a["id"].(string), map[string]any{
		"domain": host, "key": "welcome", "url": "https://example.com/welcome/v2", "tags": []string{"onboarding"},
	})
	g.Expect(one("link.updated")).To(HaveKeyWithValue("url", "https://example.com/welcome/v2"))
	g.Expect(k.redirect(t, host, "welcome").StatusCode).To(Equal(http.StatusFound))
	clicked := one("link.clicked")
	g.Expect(clicked["clicks"]).To(HaveLen(1))
	g.Expect(clicked["clicks"].([]any)[0].(map[string]any)["link"]).To(HaveKeyWithValue("id", a["id"]))

	// A Link applied with kubectl claims the same key: the younger one
	// conflicts.
	out2, err = k.kubectl(`apiVersion: kurz.dev/v1alpha1
kind: Link
metadata: {name: welcome-again}
spec: {domain: `+host+`, key: welcome, url: "https://example.com/other", tags: [onboarding]}
`, "apply", "-f", "-")
	g.Expect(err).NotTo(HaveOccurred(), out2)
	g.Expect(one("link.conflict")).To(HaveKeyWithValue("url", "https://example.com/other"))

	// A Link that expires in a few seconds.
	expires := time.Now().Add(4 * time.Second).UTC().Truncate(time.Second)
	c := k.must(t, http.StatusCreated, http.MethodPost, "/api/v1/links", map[string]any{
		"domain": host, "key": "soon", "url": "https://example.com/soon", "tags": []string{"onboarding"},
		"expires_at": expires.Format(time.RFC3339),
	})
	g.Expect(one("link.expired")).To(HaveKeyWithValue("id", c["id"]))

	k.must(t, http.StatusOK, http.MethodDelete, "/api/v1/links/"+a["id"].(string), nil)
	g.Expect(one("link.deleted")).To(HaveKeyWithValue("id", a["id"]))

	// The record goes: two absent checks later the Domain is Pending.
	dns.Set(rec["name"].(string), mdns.TypeTXT)
	g.Expect(one("domain.unverified")).To(HaveKeyWithValue("status", "pending"))

	// Every request verified, each a distinct event.
	ids := map[string]bool{}
	for _, r := range rc.all() {
		g.Expect(verifyStandardWebhook(secret, r)).To(Succeed())
		ids[r.id] = true
	}
	g.Expect(rc.ofType("link.created")).To(HaveLen(3), "welcome, welcome-again and soon")
	t.Logf("%d requests, %d distinct ids", len(rc.all()), len(ids))
}
