package restapi

import (
	"net/http"
	"strings"
	"testing"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
	. "github.com/onsi/gomega"

	"github.com/kurz-dev/kurz/internal/testenv"
)

// TestConsoleEditor drives the console in headless Chromium as an editor:
// sign in, create a link through the form (a bad URL first, refused beside
// its field), search and filter by tag, see markup in a tag as text (and
// inline script injected into the page refused by the CSP), and
// delete with confirmation (cancel keeps the link).
func TestConsoleEditor(t *testing.T) {
	testenv.Need(t)
	g := NewWithT(t)
	ctx := newBrowser(t, 1280) // first: it skips without Chromium
	w, host := newWorkspaceWithDomain(t)

	// The sign-in page shows how to make a token; a refused token stays
	// on it, with the reason beside it.
	var howTo string
	run(t, ctx, "a bad token",
		chromedp.Navigate(baseURL+"/console/"),
		chromedp.WaitVisible(chromedp.CSS(`#token`)),
		into(chromedp.Text(chromedp.CSS(`form[data-test=signin] pre code`)), &howTo),
		chromedp.SetValue(chromedp.CSS(`#token`), "a.b.c"),
		chromedp.Click(chromedp.CSS(`form[data-test=signin] button[type=submit]`)),
		waitTrue(`document.querySelector('#err-token').textContent.includes('refused')`),
	)
	g.Expect(howTo).To(MatchRegexp(`^kubectl create token \S+ -n \S+ --audience kurz\b`), "the line that makes a token for the console")
	look(t, ctx, "signin")
	signIn(t, ctx, w.editor.token)
	run(t, ctx, "an empty list", chromedp.WaitVisible(chromedp.CSS(`[data-test=no-links]`)))

	// Signed in, the token is in the HttpOnly session cookie only: not in
	// the page's storage, not readable by its scripts.
	var stored bool
	run(t, ctx, "the browser's storage", into(chromedp.Evaluate[bool](inStorage), &stored))
	g.Expect(stored).To(BeFalse(), "the page keeps nothing")
	ck := sessionCookieIn(t, ctx, baseURL)
	g.Expect(ck).NotTo(BeNil(), "the session cookie")
	g.Expect(ck.HTTPOnly).To(BeTrue())
	g.Expect(ck.SameSite).To(Equal(network.CookieSameSiteStrict))
	g.Expect(ck.Path).To(Equal("/api/"))
	g.Expect(ck.Secure).To(BeFalse(), "loopback")
	g.Expect(ck.Value).NotTo(ContainSubstring(strings.Split(w.editor.token, ".")[1]))

	// A write the console did not send (no CSRF header) is refused, though
	// the browser adds the cookie; nothing is created.
	var forged int
	run(t, ctx, "a write without the CSRF header",
		into(fetchStatus("POST", "/api/v1/links", `, body: JSON.stringify({domain: '`+host+`', key: 'forged', url: 'https://example.com/'})`), &forged))
	g.Expect(forged).To(Equal(http.StatusForbidden))
	g.Expect(w.viewer.do("GET", "/api/v1/links/lookup?domain="+host+"&key=forged", nil).status).To(Equal(http.StatusNotFound))

	// Create through the form: a bad URL is refused beside its field.
	var urlError string
	var invalid chromedp.AttributeResult
	run(t, ctx, "a bad url",
		chromedp.Click(chromedp.CSS(`[data-test=new-link]`)),
		chromedp.WaitVisible(chromedp.CSS(`#link-key`)),
		chromedp.SetValue(chromedp.CSS(`#link-domain`), host),
		chromedp.SendKeys(chromedp.CSS(`#link-key`), "docs"),
		chromedp.SendKeys(chromedp.CSS(`#link-url`), "ftp://example.com/docs"),
		chromedp.Click(chromedp.CSS(`[data-test=save]`)),
		waitTrue(`document.querySelector('[data-test=err-url]').textContent !== ''`),
		into(chromedp.Text(chromedp.CSS(`[data-test=err-url]`)), &urlError),
		into(chromedp.AttributeValue(chromedp.CSS(`#link-url`), "aria-invalid"), &invalid),
	)
	// Beside the field: the API's own words for it.
	refused := w.editor.do("POST", "/api/v1/links", map[string]any{"domain": host, "key": "docs", "url": "ftp://example.com/docs"})
	g.Expect(refused.fieldErrors("url")).To(HaveLen(1))
	g.Expect(urlError).To(Equal(refused.fieldErrors("url")[0]))
	g.Expect(invalid.Value).To(Equal("true"))
	look(t, ctx, "link-form-error")
	run(t, ctx, "a good url",
		chromedp.SetValue(chromedp.CSS(`#link-url`), "https://example.com/docs"),
		chromedp.Click(chromedp.CSS(`[data-test=save]`)),
		chromedp.WaitVisible(chromedp.CSS(`tr[data-key=docs]`)),
	)
	g.Expect(w.viewer.do("GET", "/api/v1/links/lookup?domain="+host+"&key=docs", nil).body).
		To(HaveKeyWithValue("url", "https://example.com/docs"), "the form created it")

	// A second link, tagged; one tag is markup, which must show as text.
	const markup = `<img src=x id=injected>`
	run(t, ctx, "a tagged link",
		chromedp.Click(chromedp.CSS(`[data-test=new-link]`)),
		chromedp.WaitVisible(chromedp.CSS(`#link-key`)),
		chromedp.SetValue(chromedp.CSS(`#link-domain`), host),
		chromedp.SendKeys(chromedp.CSS(`#link-key`), "promo"),
		chromedp.SendKeys(chromedp.CSS(`#link-url`), "https://example.com/promo?a=1"),
		chromedp.SetValue(chromedp.CSS(`#link-tags`), "sale, "+markup),
		chromedp.Click(chromedp.CSS(`[data-test=save]`)),
		chromedp.WaitVisible(chromedp.CSS(`tr[data-key=promo]`)),
		waitTrue(rowCount(2)),
	)
	var injected bool
	var tagTexts []string
	run(t, ctx, "the tags as text",
		into(chromedp.Evaluate[bool](`document.getElementById('injected') !== null`), &injected),
		into(chromedp.Evaluate[[]string](`[...document.querySelectorAll('tr[data-key=promo] .tag')].map(e => e.textContent)`), &tagTexts),
	)
	g.Expect(injected).To(BeFalse(), "markup in a tag made an element")
	g.Expect(tagTexts).To(ConsistOf("sale", markup))
	// Were the text-only rendering to slip, the Content-Security-Policy
	// would still stop the script: an inline <script> and an inline event
	// handler put into the page, as a flawed render would, do not run, and
	// Chromium reports each as a violation of script-src.
	var ran []string
	var violated []string
	run(t, ctx, "inject inline script",
		chromedp.Evaluate[chromedp.Void](`(() => {
			window.kurzRan = []; window.kurzViolated = [];
			document.addEventListener('securitypolicyviolation', (e) => window.kurzViolated.push(e.effectiveDirective));
			const s = document.createElement('script');
			s.textContent = 'window.kurzRan.push("script")';
			document.body.append(s);
			const b = document.createElement('button');
			b.setAttribute('onclick', 'window.kurzRan.push("handler")');
			document.body.append(b);
			b.click();
			b.remove();
			return true;
		})()`),
		waitTrue(`window.kurzViolated.length === 2`),
		into(chromedp.Evaluate[[]string](`window.kurzRan`), &ran),
		into(chromedp.Evaluate[[]string](`window.kurzViolated`), &violated))
	g.Expect(ran).To(BeEmpty(), "injected inline script ran")
	g.Expect(violated).To(ConsistOf(HavePrefix("script-src"), HavePrefix("script-src")), "the policy refused both")
	look(t, ctx, "links")

	// Search, then a tag filter (the select applies on change).
	run(t, ctx, "search",
		chromedp.SendKeys(chromedp.CSS(`#f-search`), "promo"),
		chromedp.Click(chromedp.CSS(`form[data-test=filters] button[type=submit]`)),
		waitTrue(`location.hash.includes('search=promo')`),
		waitTrue(rowCount(1)),
		chromedp.WaitVisible(chromedp.CSS(`tr[data-key=promo]`)),
	)
	run(t, ctx, "clear the search, filter by tag",
		chromedp.Navigate(baseURL+"/console/#/links"),
		waitTrue(rowCount(2)),
		chromedp.Evaluate[chromedp.Void](`(() => { const s = document.getElementById('f-tag'); s.value = 'sale'; s.dispatchEvent(new Event('change')); return true })()`),
		waitTrue(`location.hash.includes('tag=sale')`),
		waitTrue(rowCount(1)),
		chromedp.WaitVisible(chromedp.CSS(`tr[data-key=promo]`)),
	)

	// Delete asks first: Cancel keeps the link, Delete removes it.
	run(t, ctx, "delete, cancelled",
		chromedp.Navigate(baseURL+"/console/#/links"),
		waitTrue(rowCount(2)),
		chromedp.Click(chromedp.CSS(`tr[data-key=docs] [data-test=delete]`)),
		chromedp.WaitVisible(chromedp.CSS(`dialog [data-test=confirm-no]`)),
		chromedp.Click(chromedp.CSS(`dialog [data-test=confirm-no]`)),
		chromedp.WaitNotPresent(chromedp.CSS(`dialog`)),
	)
	g.Expect(w.viewer.do("GET", "/api/v1/links/lookup?domain="+host+"&key=docs", nil).status).To(Equal(http.StatusOK))
	run(t, ctx, "delete, confirmed",
		chromedp.Click(chromedp.CSS(`tr[data-key=docs] [data-test=delete]`)),
		chromedp.WaitVisible(chromedp.CSS(`dialog [data-test=confirm-yes]`)),
		chromedp.Click(chromedp.CSS(`dialog [data-test=confirm-yes]`)),
		chromedp.WaitNotPresent(chromedp.CSS(`tr[data-key=docs]`)),
		waitTrue(rowCount(1)),
	)
	g.Expect(w.viewer.do("GET", "/api/v1/links/lookup?domain="+host+"&key=docs", nil).status).To(Equal(http.StatusNotFound))

	// The QR code comes from the API, drawn from a blob: URL.
	var qrSrc chromedp.AttributeResult
	run(t, ctx, "QR code",
		chromedp.Click(chromedp.CSS(`tr[data-key=promo] [data-test=qr]`)),
		waitTrue(`(() => { const i = document.querySelector('[data-test=qr-image]'); return !!i && i.complete && i.naturalWidth === 256 })()`),
		into(chromedp.AttributeValue(chromedp.CSS(`[data-test=qr-image]`), "src"), &qrSrc),
	)
	g.Expect(qrSrc.Value).To(HavePrefix("blob:"))
	look(t, ctx, "qr")

	// Sign out clears the cookie: the API then refuses the browser, and a
	// reload asks for a token again.
	var me int
	run(t, ctx, "sign out",
		chromedp.KeyEvent("\x1b"), // close the QR dialog
		chromedp.WaitNotPresent(chromedp.CSS(`dialog`)),
		chromedp.Click(chromedp.CSS(`[data-test=signout]`)),
		chromedp.WaitVisible(chromedp.CSS(`#token`)),
		into(chromedp.Evaluate[bool](inStorage), &stored),
		into(fetchStatus("GET", "/api/v1/me", ""), &me),
	)
	g.Expect(stored).To(BeFalse(), "nothing left in the browser's storage")
	g.Expect(sessionCookieIn(t, ctx, baseURL)).To(BeNil(), "the session cookie is gone")
	g.Expect(me).To(Equal(http.StatusUnauthorized))
	run(t, ctx, "reload, signed out",
		chromedp.Reload(),
		chromedp.WaitVisible(chromedp.CSS(`#token`)),
	)
}

// TestConsoleDomains: an editor adds a domain through the form (a bad one
// first) and sees the DNS record to publish; delete asks first.
func TestConsoleDomains(t *testing.T) {
	testenv.Need(t)
	g := NewWithT(t)
	ctx := newBrowser(t, 1280) // first: it skips without Chromium
	w := newWorkspace(t)
	host := uniqueHost()
	signIn(t, ctx, w.editor.token)

	var hostError, record string
	run(t, ctx, "a bad hostname",
		chromedp.Navigate(baseURL+"/console/#/domains"),
		chromedp.WaitVisible(chromedp.CSS(`[data-test=domain-form]`)),
		chromedp.SendKeys(chromedp.CSS(`#domain-domain`), "not a host"),
		chromedp.Click(chromedp.CSS(`[data-test=add-domain]`)),
		waitTrue(`document.querySelector('[data-test=err-domain]').textContent !== ''`),
		into(chromedp.Text(chromedp.CSS(`[data-test=err-domain]`)), &hostError),
	)
	g.Expect(hostError).NotTo(BeEmpty())
	run(t, ctx, "a good hostname",
		chromedp.SetValue(chromedp.CSS(`#domain-domain`), host),
		chromedp.Click(chromedp.CSS(`[data-test=add-domain]`)),
		chromedp.WaitVisible(chromedp.CSS(`li[data-domain="`+host+`"] [data-test=dns-record]`)),
		into(chromedp.Text(chromedp.CSS(`li[data-domain="`+host+`"] [data-test=dns-record]`)), &record),
	)
	g.Expect(record).To(ContainSubstring("_kurz-challenge." + host))
	g.Expect(record).To(ContainSubstring("TXT"))
	look(t, ctx, "domains")

	run(t, ctx, "delete the domain",
		chromedp.Click(chromedp.CSS(`li[data-domain="`+host+`"] [data-test=delete-domain]`)),
		chromedp.WaitVisible(chromedp.CSS(`dialog [data-test=confirm-yes]`)),
		chromedp.Click(chromedp.CSS(`dialog [data-test=confirm-yes]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-test=no-domains]`)),
	)
	g.Expect(w.viewer.do("GET", "/api/v1/domains", nil).body["meta"]).To(HaveKeyWithValue("total", BeNumerically("==", 0)))
}

// TestConsoleViewer: a viewer's console has no edit controls, on a phone's
// width too; the lists still show.
func TestConsoleViewer(t *testing.T) {
	testenv.Need(t)
	g := NewWithT(t)
	ctx := newBrowser(t, 360) // first: it skips without Chromium
	w, host := newWorkspaceWithDomain(t)
	w.createLink(t, map[string]any{"domain": host, "key": "seen", "url": "https://example.com/"})
	signIn(t, ctx, w.viewer.token)

	var controls int
	var badge string
	run(t, ctx, "the links, read only",
		chromedp.WaitVisible(chromedp.CSS(`tr[data-key=seen]`)),
		into(chromedp.Evaluate[int](`document.querySelectorAll('[data-test=new-link], [data-test=edit], [data-test=delete], [data-test=select], [data-test=bulk]').length`), &controls),
		into(chromedp.Text(chromedp.CSS(`.badge`)), &badge),
	)
	g.Expect(controls).To(BeZero())
	g.Expect(strings.TrimSpace(badge)).To(Equal("read only"))
	look(t, ctx, "links-viewer-phone")

	// A viewer forging an edit with the session's own CSRF secret (read
	// from the session endpoint, as the console does) is refused by RBAC.
	var forged int
	run(t, ctx, "a forged edit",
		into(chromedp.Evaluate[int](`fetch('/api/console/session', {credentials: 'same-origin'}).then(r => r.json()).then(s =>
			fetch('/api/v1/links', {method: 'POST', credentials: 'same-origin',
				headers: {'Content-Type': 'application/json', 'X-Kurz-CSRF': s.csrf_token},
				body: JSON.stringify({domain: '`+host+`', key: 'forged', url: 'https://example.com/'})})).then(r => r.status)`,
			chromedp.EvalAwaitPromise), &forged))
	g.Expect(forged).To(Equal(http.StatusForbidden))
	g.Expect(w.viewer.do("GET", "/api/v1/links/lookup?domain="+host+"&key=forged", nil).status).To(Equal(http.StatusNotFound))
	run(t, ctx, "the domains, read only",
		chromedp.Navigate(baseURL+"/console/#/domains"),
		chromedp.WaitVisible(chromedp.CSS(`li[data-domain="`+host+`"]`)),
		into(chromedp.Evaluate[int](`document.querySelectorAll('[data-test=domain-form], [data-test=edit-domain], [data-test=delete-domain]').length`), &controls),
	)
	g.Expect(controls).To(BeZero())
	// Copy and QR need no write right, so they stay.
	run(t, ctx, "copy and QR stay",
		chromedp.Navigate(baseURL+"/console/#/links"),
		chromedp.WaitVisible(chromedp.CSS(`tr[data-key=seen] [data-test=qr]`)),
	)
}

// TestConsoleBulk: select links, tag them and delete them at once, through
// the bulk API.
func TestConsoleBulk(t *testing.T) {
	testenv.Need(t)
	g := NewWithT(t)
	ctx := newBrowser(t, 1280) // first: it skips without Chromium
	w, host := newWorkspaceWithDomain(t)
	for _, key := range []string{"a1", "b2", "c3"} {
		w.createLink(t, map[string]any{"domain": host, "key": key, "url": "https://example.com/" + key})
	}
	signIn(t, ctx, w.editor.token)
	run(t, ctx, "tag two",
		waitTrue(rowCount(3)),
		chromedp.Click(chromedp.CSS(`tr[data-key=a1] [data-test=select]`)),
		chromedp.Click(chromedp.CSS(`tr[data-key=b2] [data-test=select]`)),
		waitTrue(`document.querySelector('[data-test=bulk-count]').textContent === '2 selected'`),
		chromedp.SendKeys(chromedp.CSS(`#bulk-tag`), "spring"),
		chromedp.Click(chromedp.CSS(`[data-test=bulk-add-tag]`)),
		waitTrue(`document.querySelectorAll('tr .tag').length === 2`),
	)
	r := w.viewer.do("GET", "/api/v1/links?tag=spring&sort=key", nil)
	g.Expect(r.body["data"]).To(HaveExactElements(HaveKeyWithValue("key", "a1"), HaveKeyWithValue("key", "b2")), "%s", r)
	look(t, ctx, "links-bulk")
	// After a reload the console has only the cookie: it asks for the
	// session's CSRF secret again, and writes still work.
	run(t, ctx, "delete two, after a reload",
		chromedp.Reload(),
		waitTrue(rowCount(3)),
		chromedp.Click(chromedp.CSS(`tr[data-key=a1] [data-test=select]`)),
		chromedp.Click(chromedp.CSS(`tr[data-key=c3] [data-test=select]`)),
		chromedp.Click(chromedp.CSS(`[data-test=bulk-delete]`)),
		chromedp.WaitVisible(chromedp.CSS(`dialog [data-test=confirm-yes]`)),
		chromedp.Click(chromedp.CSS(`dialog [data-test=confirm-yes]`)),
		waitTrue(rowCount(1)),
		chromedp.WaitVisible(chromedp.CSS(`tr[data-key=b2]`)),
	)
	g.Expect(w.viewer.do("GET", "/api/v1/links", nil).body["meta"]).To(HaveKeyWithValue("total", BeNumerically("==", 1)))
}
