package restapi

import (
	"net/http"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	. "github.com/onsi/gomega"

	"github.com/kurz-dev/kurz/internal/testenv"
)

// TestConsoleEditor drives the console in headless Chromium as an editor:
// sign in, create a link through the form (a bad URL first, refused beside
// its field), search and filter by tag, see markup in a tag as text, and
// delete with confirmation (cancel keeps the link).
func TestConsoleEditor(t *testing.T) {
	testenv.Need(t)
	g := NewWithT(t)
	ctx := newBrowser(t, 1280) // first: it skips without Chromium
	w, host := newWorkspaceWithDomain(t)

	// A refused token stays on the sign-in page, with the reason beside it.
	run(t, ctx, "a bad token",
		chromedp.Navigate(baseURL+"/console/"),
		chromedp.WaitVisible(chromedp.CSS(`#token`)),
		chromedp.SetValue(chromedp.CSS(`#token`), "a.b.c"),
		chromedp.Click(chromedp.CSS(`form[data-test=signin] button[type=submit]`)),
		waitTrue(`document.querySelector('#err-token').textContent.includes('refused')`),
	)
	look(t, ctx, "signin")
	signIn(t, ctx, w.editor.token)
	run(t, ctx, "an empty list", chromedp.WaitVisible(chromedp.CSS(`[data-test=no-links]`)))

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

	// Sign out forgets the token: the next load asks for one.
	var stored bool
	run(t, ctx, "sign out",
		chromedp.KeyEvent("\x1b"), // close the QR dialog
		chromedp.WaitNotPresent(chromedp.CSS(`dialog`)),
		chromedp.Click(chromedp.CSS(`[data-test=signout]`)),
		chromedp.WaitVisible(chromedp.CSS(`#token`)),
		into(chromedp.Evaluate[bool](`sessionStorage.length > 0 || localStorage.length > 0 || document.cookie !== ''`), &stored),
	)
	g.Expect(stored).To(BeFalse(), "the token is gone from the browser")
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
	run(t, ctx, "delete two",
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
