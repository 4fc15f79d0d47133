package e2e

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
	. "github.com/onsi/gomega"

	"github.com/kurz-dev/kurz/internal/testenv"
	"github.com/kurz-dev/kurz/internal/testenv/browser"
)

// TestConsoleSecretsNotLogged is the issue's "no token ever in a URL or in
// logs", in a real browser against its own bin/kurz dev, logging at every
// verbosity (--zap-log-level=10: each V(n) line of the manager is written).
// A person signs in through the form (a token kube-apiserver refuses first:
// the wrong audience), then uses the console: a link through the form (a
// bad URL first), a write without the CSRF header, the link's page, its
// analytics and its QR code, a reload (the session is read again), the
// Domains and Analytics pages, sign out. A client then
// replays the cookie, tampered with, and the refused token. Afterwards
// neither token, nor any part of one that would identify it (the claims,
// the signature), nor the session cookie's value, nor the session's CSRF
// secret, is in anything kurz dev wrote (stdout, stderr, the control
// plane's log files in its data dir), nor in any URL the browser asked for;
// and every one of those URLs, over all the console's pages, is kurz's own
// (no external network requests).
func TestConsoleSecretsNotLogged(t *testing.T) {
	browser.Chromium(t) // first: skip before starting kurz dev
	g := NewWithT(t)
	dir := filepath.Join(t.TempDir(), "dev")
	k := startKurzDev(t, dir, testenv.FreeAddr(t), testenv.FreeAddr(t), "--zap-log-level=10")
	t.Cleanup(func() {
		if err := k.stop(t, syscall.SIGTERM); err != nil {
			t.Logf("kurz dev: %v; log:\n%s", err, k.log)
		}
	})
	base := "http://" + k.apiAddr
	token := k.token(t)
	g.Expect(strings.Count(token, ".")).To(Equal(2), "a JWT")
	// A real token of the same ServiceAccount, for another audience: well
	// formed, so it reaches the TokenReview, which refuses it.
	out, err := k.kubectl("", "create", "token", "kurz-admin", "-n", "default", "--audience", "not-kurz", "--duration", "10m")
	g.Expect(err).NotTo(HaveOccurred(), out)
	refusedToken := strings.TrimSpace(out)

	ctx := browser.New(t, 1280, 3*time.Minute)
	urls := requestedURLs(ctx)
	const host = "logs.e2e.example"
	k.must(t, http.StatusCreated, http.MethodPost, "/api/v1/domains", map[string]any{"domain": host})

	browser.Run(t, ctx, "a refused token",
		chromedp.Navigate(base+"/console/"),
		chromedp.WaitVisible(chromedp.CSS(`#token`)),
		chromedp.SetValue(chromedp.CSS(`#token`), refusedToken),
		chromedp.Click(chromedp.CSS(`form[data-test=signin] button[type=submit]`)),
		browser.WaitTrue(`document.querySelector('#err-token').textContent !== ''`),
	)
	consoleSignIn(t, ctx, base, token)
	var cookie string
	res, err := chromedp.Call(ctx, network.GetCookies, network.GetCookiesParams{URLs: []string{base + "/api/v1/me"}})
	g.Expect(err).NotTo(HaveOccurred())
	for _, c := range res.Cookies {
		if c.Name == "kurz_console" {
			cookie = c.Value
		}
	}
	g.Expect(cookie).NotTo(BeEmpty(), "the session cookie")
	var csrf string
	var forged int
	browser.Run(t, ctx, "use the console",
		browser.Into(chromedp.Evaluate[string](`fetch('/api/console/session').then(r => r.json()).then(s => s.csrf_token)`, chromedp.EvalAwaitPromise), &csrf),
		chromedp.Click(chromedp.CSS(`[data-test=new-link]`)),
		chromedp.WaitVisible(chromedp.CSS(`#link-key`)),
		chromedp.SetValue(chromedp.CSS(`#link-domain`), host),
		chromedp.SendKeys(chromedp.CSS(`#link-key`), "secret"),
		chromedp.SendKeys(chromedp.CSS(`#link-url`), "ftp://example.com/no"),
		chromedp.Click(chromedp.CSS(`[data-test=save]`)),
		browser.WaitTrue(`document.querySelector('[data-test=err-url]').textContent !== ''`),
		chromedp.SetValue(chromedp.CSS(`#link-url`), "https://example.com/yes"),
		chromedp.Click(chromedp.CSS(`[data-test=save]`)),
		chromedp.WaitVisible(chromedp.CSS(`tr[data-key=secret]`)),
		browser.Into(chromedp.Evaluate[int](`fetch('/api/v1/links', {method: 'POST', headers: {'Content-Type': 'application/json'},
			body: JSON.stringify({domain: '`+host+`', key: 'forged', url: 'https://example.com/'})}).then(r => r.status)`, chromedp.EvalAwaitPromise), &forged),
		chromedp.Click(chromedp.CSS(`tr[data-key=secret] [data-test=view]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-test=link-fields]`)),
		chromedp.Click(chromedp.CSS(`[data-test=qr]`)),
		browser.WaitTrue(`(() => { const i = document.querySelector('[data-test=qr-image]'); return !!i && i.complete && i.naturalWidth > 0 })()`),
		chromedp.KeyEvent("\x1b"),
		chromedp.WaitNotPresent(chromedp.CSS(`dialog`)),
		chromedp.Reload(),
		chromedp.WaitVisible(chromedp.CSS(`[data-test=link-fields]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-test=total-clicks]`)),
		chromedp.Click(chromedp.CSS(`#nav a[href="#/domains"]`)),
		chromedp.WaitVisible(chromedp.CSS(`li[data-domain="`+host+`"]`)),
		chromedp.Click(chromedp.CSS(`#nav a[href="#/analytics"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-test=total-clicks]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-test=idle-links]`)),
	)
	// Every page the console has was drawn: it asked nothing of another
	// origin (no font, script or chart library from elsewhere).
	requested := urls.list()
	g.Expect(requested).NotTo(BeEmpty())
	for _, u := range requested {
		if !strings.HasPrefix(u, "blob:"+base+"/") && !strings.HasPrefix(u, "data:") {
			g.Expect(u).To(HavePrefix(base+"/"), "a request to another origin")
		}
	}
	t.Logf("FIGURE console: %d requests, all to %s", len(requested), base)
	g.Expect(csrf).NotTo(BeEmpty(), "the session's CSRF secret")
	g.Expect(forged).To(Equal(http.StatusForbidden), "a write without the CSRF header")
	consoleSignOut(t, ctx)

	// Outside the browser: the cookie tampered with, and the refused token
	// as a bearer token, both refused.
	tampered := cookie[:len(cookie)-4] + "AAAA"
	if tampered == cookie {
		tampered = cookie[:len(cookie)-4] + "BBBB"
	}
	for _, h := range []http.Header{
		{"Cookie": {"kurz_console=" + tampered}},
		{"Authorization": {"Bearer " + refusedToken}},
	} {
		req, err := http.NewRequest(http.MethodGet, base+"/api/v1/links", nil)
		g.Expect(err).NotTo(HaveOccurred())
		req.Header = h
		resp, err := http.DefaultClient.Do(req)
		g.Expect(err).NotTo(HaveOccurred())
		resp.Body.Close()
		g.Expect(resp.StatusCode).To(Equal(http.StatusUnauthorized))
	}

	// The log is read once the last request is answered; kurz dev keeps
	// running, so the stop's lines are not searched (nothing touches a
	// session then).
	logs := k.log.String()
	g.Expect(logs).To(ContainSubstring("serving /api/v1"), "the capture holds the manager's log")
	files, err := filepath.Glob(filepath.Join(dir, "logs", "*.log"))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(files).NotTo(BeEmpty(), "the control plane's logs")
	sources := map[string]string{"kurz dev's output": logs}
	for _, f := range files {
		data, err := os.ReadFile(f)
		g.Expect(err).NotTo(HaveOccurred())
		sources[f] = string(data)
	}
	sources["the browser's request URLs"] = strings.Join(urls.list(), "\n")
	secrets := map[string]string{"the session cookie": cookie, "the tampered cookie": tampered, "the CSRF secret": csrf}
	for name, tok := range map[string]string{"the token": token, "the refused token": refusedToken} {
		parts := strings.Split(tok, ".")
		secrets[name] = tok
		secrets[name+"'s claims"] = parts[1]
		secrets[name+"'s signature"] = parts[2]
	}
	for where, text := range sources {
		for name, secret := range secrets {
			g.Expect(strings.Contains(text, secret)).To(BeFalse(), "%s is in %s:\n%s", name, where, linesWith(text, secret))
		}
	}
}

// urlLog is every URL the page asked for (DevTools' Network domain), its
// navigations, scripts and fetches alike.
type urlLog struct {
	mu   sync.Mutex
	urls []string
}

func (u *urlLog) list() []string {
	u.mu.Lock()
	defer u.mu.Unlock()
	return append([]string(nil), u.urls...)
}

// requestedURLs starts recording the URLs the page of ctx requests.
func requestedURLs(ctx context.Context) *urlLog {
	u := &urlLog{}
	events := chromedp.Events(ctx, network.RequestWillBeSent)
	go func() {
		for ev, err := range events {
			if err != nil {
				return
			}
			u.mu.Lock()
			u.urls = append(u.urls, ev.Request.URL+ev.Request.URLFragment)
			u.mu.Unlock()
		}
	}()
	return u
}

// linesWith are the lines of text that hold s, for a failure message.
func linesWith(text, s string) string {
	var out []string
	for line := range strings.SplitSeq(text, "\n") {
		if strings.Contains(line, s) {
			out = append(out, line)
		}
	}
	return strings.Join(out, "\n")
}
