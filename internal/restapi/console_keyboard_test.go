package restapi

import (
	"context"
	"net/http"
	"testing"

	"github.com/chromedp/chromedp"
	. "github.com/onsi/gomega"

	"github.com/kurz-dev/kurz/internal/testenv"
	"github.com/kurz-dev/kurz/internal/testenv/browser"
)

// TestConsoleKeyboard uses the console as a keyboard-only user with a
// screen reader would: every step is a key event (Tab, Shift+Tab, Enter,
// Space, Escape, arrows, typing), never a click, and every check reads
// document.activeElement and Chromium's accessibility tree. It signs in,
// walks the links page's focus order, creates a link (a bad URL first,
// whose error must be announced and tied to its field), searches and
// filters, opens a link's page, opens and closes the delete confirmation
// (a modal that keeps the focus, closed by Escape back to its opener),
// deletes, and signs out. Every stop the focus makes must show a focus
// indicator and have an accessible name.
func TestConsoleKeyboard(t *testing.T) {
	testenv.Need(t)
	g := NewWithT(t)
	ctx := newBrowser(t, 1280) // first: it skips without Chromium
	w, host := newWorkspaceWithDomain(t)
	promo := w.createLink(t, map[string]any{"domain": host, "key": "promo", "url": "https://example.com/promo", "tags": []string{"sale"}})
	promoLink := promo["link"].(string)
	press := browser.Press
	tab := func() chromedp.Action[chromedp.Void] { return press(browser.KeyTab) }
	focused := func() browser.Focus { return browser.Focused(t, ctx) }
	stop := func(what string, keys ...chromedp.Action[chromedp.Void]) browser.Focus {
		t.Helper()
		return browser.Stop(t, ctx, what, keys...)
	}

	// The sign-in page: the title has the focus; before it, the skip link
	// is the first stop, and Enter on it goes to the main content.
	run(t, ctx, "open the console",
		chromedp.Navigate(baseURL+"/console/"),
		chromedp.WaitVisible(chromedp.CSS(`#token`)),
	)
	// axe-core on each page (browser.Axe, not look: no screenshots, the
	// docs' pictures are the other tests').
	browser.Axe(t, ctx, "signin")
	f := focused()
	g.Expect(f.Role).To(Equal("heading"), "the title has the focus: %s", f)
	g.Expect(f.Name).To(Equal("Sign in to kurz"))
	f = stop("Shift+Tab from the title", browser.ShiftTab())
	g.Expect(f.Region).To(Equal("skip"), "the first stop is the skip link: %s", f)
	g.Expect(f.Role).To(Equal("link"))
	g.Expect(f.Name).To(Equal("Skip to content"))
	run(t, ctx, "Enter on the skip link", press(browser.KeyEnter))
	f = focused()
	g.Expect(f.Region).To(Equal("main"), "the skip link leads into main: %s", f)
	g.Expect(f.Name).To(Equal("Sign in to kurz"))

	// An empty token is refused beside the field; then the real one.
	f = stop("Tab to the token", tab())
	g.Expect(f.Role).To(Equal("textbox"))
	g.Expect(f.Name).To(Equal("API token"))
	g.Expect(f.Description).To(ContainSubstring("audience kurz"), "the help is the field's description")
	run(t, ctx, "submit an empty token", press(browser.KeyEnter),
		waitTrue(`document.querySelector('#err-token').textContent !== ''`))
	f = focused()
	g.Expect(f.ID).To(Equal("token"))
	g.Expect(f.Invalid).To(BeTrue())
	g.Expect(f.Description).To(ContainSubstring("Enter a token."))
	run(t, ctx, "type the token and Enter",
		press(w.editor.token),
		press(browser.KeyEnter),
		chromedp.WaitVisible(chromedp.CSS(`tr[data-key=promo]`)),
		waitTrue(`document.activeElement.tagName === 'H1'`),
	)
	f = focused()
	g.Expect(f.Name).To(Equal("Links"), "the new page's title has the focus")
	g.Expect(liveRegion(t, ctx)).To(Equal("Signed in."))

	// What a screen reader finds on the links page: the landmarks, the
	// search form's labelled fields, the table's headers.
	browser.Axe(t, ctx, "links")
	ax := browser.AXTree(t, ctx)
	g.Expect(ax.Find("banner")).To(HaveLen(1))
	g.Expect(ax.Names("navigation")).To(Equal([]string{"Main"}))
	g.Expect(ax.Find("main")).To(HaveLen(1))
	g.Expect(ax.Find("search")).To(HaveLen(1))
	status := ax.Find("status")
	g.Expect(status).To(HaveLen(1))
	g.Expect(status[0].Props).To(HaveKeyWithValue("live", "polite"))
	g.Expect(ax.Names("heading")).To(ContainElement("Links"))
	g.Expect(ax.Names("searchbox")).To(Equal([]string{"Search"}))
	g.Expect(ax.Names("combobox")).To(Equal([]string{"Tag", "State", "Sort"}))
	g.Expect(ax.Names("table")).To(Equal([]string{"1 link"}))
	g.Expect(ax.Names("columnheader")).To(Equal([]string{"Select", "Short link", "Destination", "Tags", "State", "Clicks", "Actions"}))
	g.Expect(ax.Names("checkbox")).To(Equal([]string{"Select " + promoLink}))

	// The whole page's focus order, from the top: the skip link, the
	// navigation, sign out, then the main content in reading order; each
	// stop named and visible.
	run(t, ctx, "reload, to Tab from the top", chromedp.Reload(),
		chromedp.WaitVisible(chromedp.CSS(`tr[data-key=promo]`)),
		waitTrue(`document.activeElement.tagName === 'H1'`))
	f = stop("Shift+Tab from the title", browser.ShiftTab())
	g.Expect(f.Name).To(Equal("Sign out"))
	for range 4 {
		f = stop("Shift+Tab", browser.ShiftTab())
	}
	g.Expect(f.Name).To(Equal("Skip to content"))
	stops := append([]browser.Focus{f}, browser.TabAround(t, ctx, 60)...)
	var order []string
	lowest := stops[0]
	for _, s := range stops {
		order = append(order, s.Region+": "+s.Role+" "+s.Name)
		if s.Contrast < lowest.Contrast {
			lowest = s
		}
	}
	t.Logf("FIGURE focus indicator: lowest contrast %.2f:1 over %d stops, at %s", lowest.Contrast, len(stops), lowest)
	g.Expect(order).To(HaveExactElements(
		"skip: link Skip to content",
		"header: link Links", "header: link Analytics", "header: link Domains",
		"header: button Sign out",
		"main: link New link",
		"main: searchbox Search", "main: combobox Tag", "main: combobox State", "main: combobox Sort", "main: button Apply",
		"main: textbox Tag", "main: button Add tag", "main: button Remove tag", "main: button Delete selected",
		"main: checkbox Select "+promoLink,
		"main: link "+promoLink,
		"main: link Details and analytics of "+promoLink,
		"main: button Copy "+promoLink,
		"main: button QR code of "+promoLink,
		"main: link Edit "+promoLink,
		"main: button Delete "+promoLink,
	))

	// Create a link through the form: a bad URL first. Its error is
	// announced, tied to the field (aria-invalid, aria-describedby) and
	// the field gets the focus.
	run(t, ctx, "back to the title", chromedp.Reload(),
		chromedp.WaitVisible(chromedp.CSS(`tr[data-key=promo]`)),
		waitTrue(`document.activeElement.tagName === 'H1'`))
	f = stop("Tab to New link", tab())
	g.Expect(f.Name).To(Equal("New link"))
	run(t, ctx, "Enter on New link", press(browser.KeyEnter),
		chromedp.WaitVisible(chromedp.CSS(`#link-key`)),
		waitTrue(`document.activeElement.tagName === 'H1'`))
	g.Expect(focused().Name).To(Equal("New link"))
	browser.Axe(t, ctx, "link-form")
	ax = browser.AXTree(t, ctx)
	// The domain has a list of the workspace's domains: a combobox.
	g.Expect(ax.Names("combobox")).To(Equal([]string{"Domain"}))
	g.Expect(ax.Names("textbox")).To(ContainElements("Key", "Destination URL", "Tags"))
	f = stop("Tab to the domain", tab())
	g.Expect(f.Name).To(Equal("Domain"))
	f = stop("Tab to the key", tab())
	g.Expect(f.Name).To(Equal("Key"))
	g.Expect(f.Description).To(ContainSubstring("the path of the short link"))
	run(t, ctx, "type the key", press("docs"))
	f = stop("Tab to the URL", tab())
	g.Expect(f.Name).To(Equal("Destination URL"))
	run(t, ctx, "type a bad URL and Enter", press("ftp://example.com/docs"), press(browser.KeyEnter),
		waitTrue(`document.querySelector('[data-test=err-url]').textContent !== ''`))
	refused := w.editor.do("POST", "/api/v1/links", map[string]any{"domain": host, "key": "docs", "url": "ftp://example.com/docs"})
	g.Expect(refused.fieldErrors("url")).To(HaveLen(1))
	urlError := refused.fieldErrors("url")[0]
	f = focused()
	browser.CheckStop(t, "the refused field", f)
	g.Expect(f.ID).To(Equal("link-url"), "the first refused field has the focus: %s", f)
	g.Expect(f.Invalid).To(BeTrue(), "aria-invalid")
	g.Expect(f.Description).To(ContainSubstring(urlError), "the error is the field's description")
	g.Expect(liveRegion(t, ctx)).NotTo(BeEmpty(), "the refusal is announced")
	browser.Axe(t, ctx, "link-form-error")
	run(t, ctx, "replace the URL and Enter",
		browser.SelectAll(), press("https://example.com/docs"), press(browser.KeyEnter),
		chromedp.WaitVisible(chromedp.CSS(`tr[data-key=docs]`)),
		waitTrue(`document.activeElement.tagName === 'H1'`))
	docs := w.viewer.do("GET", "/api/v1/links/lookup?domain="+host+"&key=docs", nil)
	g.Expect(docs.body).To(HaveKeyWithValue("url", "https://example.com/docs"), "the form created it")
	docsLink := docs.body["link"].(string)
	g.Expect(liveRegion(t, ctx)).To(Equal("Created " + docsLink + "."))

	// Search: type and Enter. The focus stays in the search field and the
	// count is announced.
	f = browser.TabTo(t, ctx, "Search", 3)
	run(t, ctx, "search for docs", press("docs"), press(browser.KeyEnter),
		waitTrue(`location.hash.includes('search=docs')`), waitTrue(rowCount(1)),
		chromedp.WaitVisible(chromedp.CSS(`tr[data-key=docs]`)))
	f = focused()
	browser.CheckStop(t, "after the search", f)
	g.Expect(f.ID).To(Equal("f-search"), "the focus stays in the search field: %s", f)
	g.Expect(liveRegion(t, ctx)).To(Equal("1 link matches."))
	run(t, ctx, "clear the search", browser.SelectAll(), press(browser.KeyBackspace), press(browser.KeyEnter),
		waitTrue(`!location.hash.includes('search=')`), waitTrue(rowCount(2)))
	g.Expect(focused().ID).To(Equal("f-search"))

	// Filter by tag with the arrow keys: each arrow applies, and the focus
	// stays on the select so the next arrow works.
	f = stop("Tab to the tag filter", tab())
	g.Expect(f.Name).To(Equal("Tag"))
	run(t, ctx, "ArrowDown: the first tag", press(browser.KeyArrowDown),
		waitTrue(`location.hash.includes('tag=sale')`), waitTrue(rowCount(1)),
		chromedp.WaitVisible(chromedp.CSS(`tr[data-key=promo]`)))
	f = focused()
	browser.CheckStop(t, "after the filter", f)
	g.Expect(f.ID).To(Equal("f-tag"), "the focus stays on the filter: %s", f)
	g.Expect(liveRegion(t, ctx)).To(Equal("1 link matches."))
	run(t, ctx, "ArrowUp: any tag", press(browser.KeyArrowUp),
		waitTrue(`!location.hash.includes('tag=')`), waitTrue(rowCount(2)))
	g.Expect(focused().ID).To(Equal("f-tag"))
	g.Expect(liveRegion(t, ctx)).To(Equal("2 links match."))

	// A link's page, by Enter on its Details, and back by its first link.
	browser.TabTo(t, ctx, "Details and analytics of "+docsLink, 30)
	run(t, ctx, "Enter on Details", press(browser.KeyEnter),
		chromedp.WaitVisible(chromedp.CSS(`[data-test=link-fields]`)),
		waitTrue(`document.activeElement.tagName === 'H1'`))
	f = focused()
	g.Expect(f.Role).To(Equal("heading"))
	g.Expect(f.Name).To(Equal(docsLink))
	browser.Axe(t, ctx, "link-page")
	f = stop("Shift+Tab to the way back", browser.ShiftTab())
	g.Expect(f.Name).To(Equal("← Links"))
	run(t, ctx, "Enter: back to the links", press(browser.KeyEnter),
		chromedp.WaitVisible(chromedp.CSS(`tr[data-key=docs]`)),
		waitTrue(`document.activeElement.tagName === 'H1'`))

	// The QR code's dialog: named by its title, the focus in it and kept
	// there, Escape back to the button that opened it.
	qr := browser.TabTo(t, ctx, "QR code of "+docsLink, 30)
	run(t, ctx, "Enter on QR", press(browser.KeyEnter), chromedp.WaitVisible(chromedp.CSS(`dialog[open] [data-test=qr-image]`)),
		waitTrue(`document.querySelector('[data-test=qr-download]').hasAttribute('href')`))
	f = focused()
	browser.CheckStop(t, "the QR dialog's first focus", f)
	g.Expect(f.Region).To(Equal("dialog"), "the focus is in the dialog: %s", f)
	g.Expect(browser.AXTree(t, ctx).Names("dialog")).To(Equal([]string{"QR code for " + docsLink}))
	var qrStops []string
	for range 8 {
		f = stop("Tab in the QR dialog", tab())
		g.Expect(f.Region).To(Equal("dialog"), "Tab left the QR dialog: %s", f)
		qrStops = append(qrStops, f.Name)
	}
	g.Expect(qrStops).To(HaveExactElements("Background", "Size (px)", "Format", "Update", "Download", "Close", "Colour", "Background"))
	run(t, ctx, "Escape closes the QR dialog", press(browser.KeyEscape), chromedp.WaitNotPresent(chromedp.CSS(`dialog`)))
	f = focused()
	browser.CheckStop(t, "after the QR dialog", f)
	g.Expect(f.Name).To(Equal(qr.Name), "the focus is back on the opener: %s", f)

	// The delete confirmation: a modal dialog named by its question that
	// opens on Cancel, keeps the focus inside, and closes on Escape with
	// the focus back on the button that opened it.
	opener := browser.TabTo(t, ctx, "Delete "+docsLink, 30)
	run(t, ctx, "Enter on Delete", press(browser.KeyEnter), chromedp.WaitVisible(chromedp.CSS(`dialog[open]`)))
	f = focused()
	browser.CheckStop(t, "the dialog's first focus", f)
	g.Expect(f.Region).To(Equal("dialog"))
	g.Expect(f.Name).To(Equal("Cancel"), "the safe choice has the focus")
	ax = browser.AXTree(t, ctx)
	dialogs := ax.Find("dialog")
	g.Expect(dialogs).To(HaveLen(1))
	g.Expect(dialogs[0].Name).To(Equal("Delete " + docsLink + "? Visitors will get the domain's not-found page."))
	g.Expect(dialogs[0].Props).To(HaveKeyWithValue("modal", "true"))
	browser.Axe(t, ctx, "confirm")
	for i := range 5 {
		f = stop("Tab in the dialog", tab())
		g.Expect(f.Region).To(Equal("dialog"), "Tab %d left the dialog: %s", i+1, f)
	}
	for i := range 5 {
		f = stop("Shift+Tab in the dialog", browser.ShiftTab())
		g.Expect(f.Region).To(Equal("dialog"), "Shift+Tab %d left the dialog: %s", i+1, f)
	}
	run(t, ctx, "Escape", press(browser.KeyEscape), chromedp.WaitNotPresent(chromedp.CSS(`dialog`)))
	f = focused()
	browser.CheckStop(t, "after Escape", f)
	g.Expect(f.Name).To(Equal(opener.Name), "the focus is back on the opener: %s", f)
	g.Expect(w.viewer.do("GET", "/api/v1/links/lookup?domain="+host+"&key=docs", nil).status).To(Equal(http.StatusOK), "Escape deleted nothing")

	// Space opens it again; Delete is the other button; Enter deletes, and
	// the deletion is announced.
	run(t, ctx, "Space on Delete", press(browser.KeySpace), chromedp.WaitVisible(chromedp.CSS(`dialog[open]`)))
	f = stop("Shift+Tab to the dialog's Delete", browser.ShiftTab())
	g.Expect(f.Region).To(Equal("dialog"))
	g.Expect(f.Name).To(Equal("Delete"))
	run(t, ctx, "Enter: delete", press(browser.KeyEnter),
		chromedp.WaitNotPresent(chromedp.CSS(`tr[data-key=docs]`)), waitTrue(rowCount(1)))
	g.Expect(w.viewer.do("GET", "/api/v1/links/lookup?domain="+host+"&key=docs", nil).status).To(Equal(http.StatusNotFound))
	g.Expect(liveRegion(t, ctx)).To(Equal("Deleted " + docsLink + "."))
	// The focus goes where the deleted row was: the next row's first
	// control (promo's box), not the page's title far above.
	f = focused()
	browser.CheckStop(t, "after the delete", f)
	g.Expect(f.Name).To(Equal("Select "+promoLink), "the next row has the focus: %s", f)

	// Sign out, from the header: announced, and the API refuses the
	// browser.
	f = browser.ShiftTabTo(t, ctx, "Sign out", 30)
	g.Expect(f.Region).To(Equal("header"))
	var me int
	run(t, ctx, "Enter: sign out", press(browser.KeyEnter),
		chromedp.WaitVisible(chromedp.CSS(`#token`)),
		waitTrue(`document.activeElement.tagName === 'H1'`),
		into(fetchStatus("GET", "/api/v1/me", ""), &me))
	g.Expect(me).To(Equal(http.StatusUnauthorized))
	g.Expect(focused().Name).To(Equal("Sign in to kurz"))
	g.Expect(liveRegion(t, ctx)).To(Equal("Signed out."))
}

// liveRegion is what the page's status region (role=status, aria-live)
// holds in the accessibility tree: what a screen reader announced last.
func liveRegion(t *testing.T, ctx context.Context) string {
	t.Helper()
	st := browser.AXTree(t, ctx).Find("status")
	if len(st) != 1 {
		t.Fatalf("%d status regions in the accessibility tree, want 1", len(st))
	}
	return st[0].Text()
}
