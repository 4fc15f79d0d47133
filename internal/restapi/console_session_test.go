package restapi

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/kurz-dev/kurz/internal/consolesession"
	"github.com/kurz-dev/kurz/internal/testenv"
)

// TestSecureCookieDecision: Secure is off only for plain HTTP to a
// loopback host.
func TestSecureCookieDecision(t *testing.T) {
	for host, want := range map[string]bool{
		"127.0.0.1:8080":        false,
		"127.1.2.3":             false,
		"[::1]:8080":            false,
		"localhost:8080":        false,
		"LOCALHOST.":            false,
		"console.localhost:80":  false,
		"kurz.example.com":      true,
		"kurz.example.com:8080": true,
		"10.0.0.1:8080":         true,
		"[2001:db8::1]:443":     true,
		"localhost.example.com": true,
		"":                      true,
	} {
		r := httptest.NewRequest(http.MethodPost, "http://x"+sessionPath, nil)
		r.Host = host
		if got := secureCookie(r); got != want {
			t.Errorf("Host %q over HTTP: Secure %v, want %v", host, got, want)
		}
	}
	r := httptest.NewRequest(http.MethodPost, "https://127.0.0.1"+sessionPath, nil)
	r.TLS = &tls.ConnectionState{}
	if !secureCookie(r) {
		t.Error("HTTPS to loopback: Secure off")
	}
}

// cookieBrowser is a client with a cookie jar, as a browser keeps cookies (by
// path, expiry and deletion), and the CSRF secret the console keeps.
type cookieBrowser struct {
	t    *testing.T
	http *http.Client
	csrf string
}

func newBrowserClient(t *testing.T) *cookieBrowser {
	jar, err := cookiejar.New(nil)
	NewWithT(t).Expect(err).NotTo(HaveOccurred())
	return &cookieBrowser{t: t, http: &http.Client{Jar: jar}}
}

// request sends method to target with body as JSON and headers; it answers
// the status, the headers and the body.
func (b *cookieBrowser) request(method, target string, body any, headers map[string]string) (int, http.Header, []byte) {
	b.t.Helper()
	var rd io.Reader
	if body != nil {
		data, err := json.Marshal(body)
		NewWithT(b.t).Expect(err).NotTo(HaveOccurred())
		rd = bytes.NewReader(data)
	}
	req, err := http.NewRequest(method, target, rd)
	NewWithT(b.t).Expect(err).NotTo(HaveOccurred())
	req.Header.Set("Content-Type", "application/json")
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := b.http.Do(req)
	NewWithT(b.t).Expect(err).NotTo(HaveOccurred())
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, raw
}

// signIn signs in at base's session endpoint and keeps the CSRF secret.
func (b *cookieBrowser) signIn(base, token string) *http.Response {
	b.t.Helper()
	status, h, raw := b.request("POST", base+sessionPath, map[string]string{"token": token}, nil)
	NewWithT(b.t).Expect(status).To(Equal(http.StatusCreated), "%s", raw)
	var v sessionView
	NewWithT(b.t).Expect(json.Unmarshal(raw, &v)).To(Succeed())
	b.csrf = v.CSRFToken
	return &http.Response{StatusCode: status, Header: h}
}

// api calls base's /api/v1 path with the jar's cookie, with the CSRF
// secret when csrf is set, checked against the OpenAPI document.
func (b *cookieBrowser) api(base, method, path string, body any, csrf string) response {
	b.t.Helper()
	var rd io.Reader
	if body != nil {
		data, _ := json.Marshal(body)
		rd = bytes.NewReader(data)
	}
	req, err := http.NewRequest(method, base+path, rd)
	NewWithT(b.t).Expect(err).NotTo(HaveOccurred())
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	if csrf != "" {
		req.Header.Set(csrfHeader, csrf)
	}
	u, _ := url.Parse(base + "/api/")
	for _, c := range b.http.Jar.Cookies(u) {
		req.AddCookie(c)
	}
	return send(b.t, req)
}

// sessionCookieOf is the session cookie a sign-in answer set.
func sessionCookieOf(t *testing.T, h http.Header) *http.Cookie {
	t.Helper()
	for _, c := range (&http.Response{Header: h}).Cookies() {
		if c.Name == sessionCookie {
			return c
		}
	}
	t.Fatalf("no %s cookie in %q", sessionCookie, h.Values("Set-Cookie"))
	return nil
}

// mintTokenFor returns a token of ns/name for the audience kurz valid for
// d, and its expiry as kube-apiserver states it.
func mintTokenFor(t *testing.T, ns, name string, d time.Duration) (string, time.Time) {
	t.Helper()
	tr, err := clientset.CoreV1().ServiceAccounts(ns).CreateToken(context.Background(), name, &authenticationv1.TokenRequest{
		Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To(int64(d.Seconds())), Audiences: []string{DefaultTokenAudience}},
	}, metav1.CreateOptions{})
	NewWithT(t).Expect(err).NotTo(HaveOccurred())
	return tr.Status.Token, tr.Status.ExpirationTimestamp.Time
}

// TestConsoleSessionCookie: sign-in answers a cookie that is HttpOnly,
// SameSite=Strict, on /api/ only, Secure unless on loopback, and that ends
// with the token or after consolesession.MaxAge, whichever is first.
func TestConsoleSessionCookie(t *testing.T) {
	testenv.Need(t)
	g := NewWithT(t)
	w := newWorkspace(t)

	short, shortExp := mintTokenFor(t, w.ns, "editor", time.Hour)
	b := newBrowserClient(t)
	resp := b.signIn(baseURL, short)
	c := sessionCookieOf(t, resp.Header)
	g.Expect(c.HttpOnly).To(BeTrue())
	g.Expect(c.SameSite).To(Equal(http.SameSiteStrictMode))
	g.Expect(c.Path).To(Equal("/api/"))
	g.Expect(c.Secure).To(BeFalse(), "loopback: not Secure")
	g.Expect(c.Expires.Unix()).To(Equal(shortExp.Unix()), "a 1 h token: the session ends with it")
	g.Expect(c.Value).NotTo(ContainSubstring(strings.Split(short, ".")[1]), "the token is sealed")
	g.Expect(resp.Header.Get("Cache-Control")).To(Equal("no-store"))
	g.Expect(b.csrf).NotTo(BeEmpty())

	long, _ := mintTokenFor(t, w.ns, "editor", 48*time.Hour)
	before := time.Now()
	resp = newBrowserClient(t).signIn(baseURL, long)
	after := time.Now()
	c = sessionCookieOf(t, resp.Header)
	g.Expect(c.Expires).To(BeTemporally(">=", before.Add(consolesession.MaxAge).Truncate(time.Second)))
	g.Expect(c.Expires).To(BeTemporally("<=", after.Add(consolesession.MaxAge)))
	g.Expect(c.MaxAge).To(BeNumerically("<=", int(consolesession.MaxAge.Seconds())))

	// The same server named by a public hostname: Secure.
	req, _ := http.NewRequest("POST", baseURL+sessionPath, strings.NewReader(`{"token":"`+short+`"}`))
	req.Host = "kurz.example.com"
	req.Header.Set("Content-Type", "application/json")
	r, err := http.DefaultClient.Do(req)
	g.Expect(err).NotTo(HaveOccurred())
	r.Body.Close()
	g.Expect(r.StatusCode).To(Equal(http.StatusCreated))
	g.Expect(sessionCookieOf(t, r.Header).Secure).To(BeTrue())
}

// TestConsoleSignInRefused: a bad token, a token for kube-apiserver, no
// token, a form post and a cross-site request get no cookie.
func TestConsoleSignInRefused(t *testing.T) {
	testenv.Need(t)
	g := NewWithT(t)
	w := newWorkspace(t)
	b := newBrowserClient(t)
	for _, tc := range []struct {
		name    string
		body    any
		headers map[string]string
		status  int
	}{
		{"garbage", map[string]string{"token": "a.b.c"}, nil, http.StatusUnauthorized},
		{"kube-apiserver's audience", map[string]string{"token": mintToken(t, w.ns, "editor")}, nil, http.StatusUnauthorized},
		{"no token", map[string]string{}, nil, http.StatusUnprocessableEntity},
		{"a form", map[string]string{"token": w.editor.token}, map[string]string{"Content-Type": "application/x-www-form-urlencoded"}, http.StatusUnsupportedMediaType},
		{"another site", map[string]string{"token": w.editor.token}, map[string]string{"Sec-Fetch-Site": "cross-site"}, http.StatusForbidden},
	} {
		status, h, raw := b.request("POST", baseURL+sessionPath, tc.body, tc.headers)
		g.Expect(status).To(Equal(tc.status), "%s: %s", tc.name, raw)
		g.Expect(h.Values("Set-Cookie")).To(BeEmpty(), tc.name)
		g.Expect(h.Get("Content-Type")).To(HavePrefix("application/json"), tc.name)
		var body map[string]any
		g.Expect(json.Unmarshal(raw, &body)).To(Succeed(), tc.name)
		g.Expect(body).To(HaveKey("message"), tc.name)
	}
	status, _, _ := b.request("GET", baseURL+sessionPath, nil, nil)
	g.Expect(status).To(Equal(http.StatusUnauthorized), "no session")
}

// TestConsoleSessionCSRF: with the cookie, reads need nothing more, but a
// write without the session's CSRF secret, or with a wrong one, is refused
// (403) and changes nothing; a viewer's forged write with the right secret
// is refused by RBAC.
func TestConsoleSessionCSRF(t *testing.T) {
	testenv.Need(t)
	g := NewWithT(t)
	w, host := newWorkspaceWithDomain(t)
	editor := newBrowserClient(t)
	editor.signIn(baseURL, w.editor.token)
	link := map[string]any{"domain": host, "key": "csrf", "url": "https://example.com/"}

	g.Expect(editor.api(baseURL, "GET", "/api/v1/links", nil, "").status).To(Equal(http.StatusOK))
	for name, csrf := range map[string]string{"no": "", "a wrong": editor.csrf[1:] + "A"} {
		r := editor.api(baseURL, "POST", "/api/v1/links", link, csrf)
		g.Expect(r.status).To(Equal(http.StatusForbidden), "%s CSRF header: %s", name, r)
		g.Expect(r.body).To(HaveKeyWithValue("message", "CSRF token mismatch."))
	}
	g.Expect(w.viewer.do("GET", "/api/v1/links/lookup?domain="+host+"&key=csrf", nil).status).To(Equal(http.StatusNotFound), "nothing was created")

	r := editor.api(baseURL, "POST", "/api/v1/links", link, editor.csrf)
	g.Expect(r.status).To(Equal(http.StatusCreated), "%s", r)
	id := r.body["id"].(string)
	r = editor.api(baseURL, "DELETE", "/api/v1/links/"+id, nil, "")
	g.Expect(r.status).To(Equal(http.StatusForbidden), "%s", r)
	g.Expect(w.viewer.do("GET", "/api/v1/links/"+id, nil).status).To(Equal(http.StatusOK), "nothing was deleted")

	// A bearer header needs no CSRF secret, the cookie beside it or not.
	g.Expect(w.editor.do("PUT", "/api/v1/links/"+id, map[string]any{"domain": host, "key": "csrf", "url": "https://example.com/bearer"}).status).To(Equal(http.StatusOK))

	viewer := newBrowserClient(t)
	viewer.signIn(baseURL, w.viewer.token)
	r = viewer.api(baseURL, "PUT", "/api/v1/links/"+id, map[string]any{"domain": host, "key": "csrf", "url": "https://evil.example/"}, viewer.csrf)
	g.Expect(r.status).To(Equal(http.StatusForbidden), "%s", r)
	g.Expect(r.body).To(HaveKeyWithValue("message", "This action is unauthorized."))
	g.Expect(w.viewer.do("GET", "/api/v1/links/"+id, nil).body).To(HaveKeyWithValue("url", "https://example.com/bearer"))
}

// TestConsoleSessionReplicas: two servers with one key accept each other's
// sessions; a server with another key, and a changed cookie, do not.
func TestConsoleSessionReplicas(t *testing.T) {
	testenv.Need(t)
	g := NewWithT(t)
	w := newWorkspace(t)
	b := newBrowserClient(t)
	c := sessionCookieOf(t, b.signIn(baseURL, w.editor.token).Header)

	// analyticsURL is a second API server reading the same key file.
	for _, base := range []string{baseURL, analyticsURL} {
		r := b.api(base, "GET", "/api/v1/me", nil, "")
		g.Expect(r.status).To(Equal(http.StatusOK), "%s: %s", base, r)
		g.Expect(r.body).To(HaveKeyWithValue("workspace_name", w.ns))
		status, _, raw := b.request("GET", base+sessionPath, nil, nil)
		g.Expect(status).To(Equal(http.StatusOK), "%s", raw)
		g.Expect(string(raw)).To(ContainSubstring(b.csrf), "after a reload the console gets its CSRF secret back")
	}

	with := func(base, value string) response {
		req, _ := http.NewRequest("GET", base+"/api/v1/me", nil)
		req.AddCookie(&http.Cookie{Name: sessionCookie, Value: value})
		return send(t, req)
	}
	g.Expect(with(baseURL, c.Value).status).To(Equal(http.StatusOK))
	// limitedURL seals with a key of its own.
	g.Expect(with(limitedURL, c.Value).status).To(Equal(http.StatusUnauthorized))
	raw, err := base64.RawURLEncoding.DecodeString(c.Value)
	g.Expect(err).NotTo(HaveOccurred())
	raw[len(raw)/2] ^= 1
	g.Expect(with(baseURL, base64.RawURLEncoding.EncodeToString(raw)).status).To(Equal(http.StatusUnauthorized))
	g.Expect(with(baseURL, c.Value[:len(c.Value)-4]).status).To(Equal(http.StatusUnauthorized))
}

// TestConsoleSignOut: sign-out clears the cookie (Max-Age=0), and the
// browser is then refused.
func TestConsoleSignOut(t *testing.T) {
	testenv.Need(t)
	g := NewWithT(t)
	w := newWorkspace(t)
	b := newBrowserClient(t)
	b.signIn(baseURL, w.editor.token)
	g.Expect(b.api(baseURL, "GET", "/api/v1/me", nil, "").status).To(Equal(http.StatusOK))

	status, h, _ := b.request("DELETE", baseURL+sessionPath, nil, nil)
	g.Expect(status).To(Equal(http.StatusNoContent))
	g.Expect(h.Get("Set-Cookie")).To(And(HavePrefix(sessionCookie+"=;"), ContainSubstring("Path=/api/"), ContainSubstring("Max-Age=0"), ContainSubstring("HttpOnly")))
	u, _ := url.Parse(baseURL + "/api/")
	g.Expect(b.http.Jar.Cookies(u)).To(BeEmpty())
	for _, path := range []string{"/api/v1/me", "/api/v1/links", "/api/v1/domains"} {
		g.Expect(b.api(baseURL, "GET", path, nil, "").status).To(Equal(http.StatusUnauthorized), path)
	}
	status, _, _ = b.request("GET", baseURL+sessionPath, nil, nil)
	g.Expect(status).To(Equal(http.StatusUnauthorized))
}

// TestConsoleSessionRevoked: the token behind a valid cookie is reviewed on
// every request (after the review cache's TTL): once its ServiceAccount is
// deleted, the session is refused.
func TestConsoleSessionRevoked(t *testing.T) {
	testenv.Need(t)
	g := NewWithT(t)
	w := newWorkspace(t)
	token := serviceAccountToken(t, w.ns, "temp", "kurz-editor", "create")
	b := newBrowserClient(t)
	b.signIn(baseURL, token)
	g.Expect(b.api(baseURL, "GET", "/api/v1/me", nil, "").status).To(Equal(http.StatusOK))

	g.Expect(k8s.Delete(context.Background(), &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: w.ns, Name: "temp"}})).To(Succeed())
	g.Eventually(func() int {
		return b.api(baseURL, "GET", "/api/v1/me", nil, "").status
	}, 30*time.Second, 200*time.Millisecond).Should(Equal(http.StatusUnauthorized))
	status, _, _ := b.request("GET", baseURL+sessionPath, nil, nil)
	g.Expect(status).To(Equal(http.StatusUnauthorized))
	// Signing in again with it is refused too.
	status, h, _ := b.request("POST", baseURL+sessionPath, map[string]string{"token": token}, nil)
	g.Expect(status).To(Equal(http.StatusUnauthorized))
	g.Expect(h.Values("Set-Cookie")).To(BeEmpty())
}
