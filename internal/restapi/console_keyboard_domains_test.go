package restapi

import (
	"context"
	"testing"

	. "github.com/onsi/gomega"

	"github.com/kurz-dev/kurz/internal/testenv"
	"github.com/kurz-dev/kurz/internal/testenv/browser"
)

// TestConsoleKeyboardDomains uses the Domains page with the keys alone, at
// a desktop's and a phone's width: reached from the header, its form adds
// a domain (a bad hostname first: focused, described, announced), the new
// domain's DNS record is copied by its buttons (the clipboard and the
// announcement checked), the domain is edited in its card (the Edit
// button says whether the form is open, Cancel goes back to it, a refused
// field gets the focus) and deleted after a confirmation. After each
// change the focus goes to where the user goes on, not to the title.
func TestConsoleKeyboardDomains(t *testing.T) {
	testenv.Need(t)
	atEachWidth(t, func(t *testing.T, ctx context.Context) {
		g := NewWithT(t)
		w := newWorkspace(t)
		other := uniqueHost()
		w.createDomain(t, other)
		host := uniqueHost()
		press := browser.Press
		keyboardSignIn(t, ctx, baseURL, w.editor.token)
		navigate(t, ctx, "Domains", "Domains")
		browser.Axe(t, ctx, "domains")
		fitsWidth(t, ctx, "the domains page")
		otherRecord := w.viewer.do("GET", "/api/v1/domains", nil).body["data"].([]any)[0].(map[string]any)["dns_record"].(map[string]any)
		g.Expect(tabOrder(t, ctx, 30)).To(HaveExactElements(
			"textbox Hostname", "textbox Not-found page (optional)", "textbox Expired-link page (optional)", "button Add domain",
			"button Edit "+other, "button Delete "+other,
			"button Copy record name "+otherRecord["name"].(string), "button Copy record value",
		), "the stops after the title")

		// A bad hostname, then a good one.
		browser.TabTo(t, ctx, "Hostname", 10)
		run(t, ctx, "type a bad hostname and Enter", press("not a host"), press(browser.KeyEnter),
			waitTrue(`document.querySelector('[data-test=err-domain]').textContent !== ''`))
		refused := w.editor.do("POST", "/api/v1/domains", map[string]any{"domain": "not a host"})
		g.Expect(refused.fieldErrors("domain")).To(HaveLen(1))
		f := browser.Focused(t, ctx)
		browser.CheckStop(t, "the refused hostname", f)
		g.Expect(f.ID).To(Equal("domain-domain"))
		g.Expect(f.Invalid).To(BeTrue())
		g.Expect(f.Description).To(ContainSubstring(refused.fieldErrors("domain")[0]))
		g.Expect(liveRegion(t, ctx)).To(Equal(refused.body["message"]))
		run(t, ctx, "type a good one and Enter", browser.SelectAll(), press(host), press(browser.KeyEnter),
			waitTrue(`!!document.querySelector('li[data-domain="`+host+`"]')`))
		g.Expect(liveRegion(t, ctx)).To(Equal("Added " + host + "; publish its DNS record to activate it."))
		var record map[string]any
		for _, d := range w.viewer.do("GET", "/api/v1/domains", nil).body["data"].([]any) {
			if d.(map[string]any)["domain"] == host {
				record = d.(map[string]any)["dns_record"].(map[string]any)
			}
		}
		g.Expect(record).NotTo(BeNil())
		// The next thing to do is to publish the record: its first Copy
		// has the focus.
		f = browser.Focused(t, ctx)
		browser.CheckStop(t, "after adding", f)
		g.Expect(f.Name).To(Equal("Copy record name "+record["name"].(string)), "the new domain's record has the focus: %s", f)
		run(t, ctx, "Enter: copy the name", press(browser.KeyEnter))
		g.Expect(clipboard(t, ctx)).To(Equal(record["name"]))
		g.Expect(liveRegion(t, ctx)).To(Equal("Copied record name: " + record["name"].(string)))
		f = browser.Stop(t, ctx, "Tab to the value's Copy", press(browser.KeyTab))
		g.Expect(f.Name).To(Equal("Copy record value"))
		run(t, ctx, "Space: copy the value", press(browser.KeySpace))
		g.Expect(clipboard(t, ctx)).To(Equal(record["value"]))
		g.Expect(liveRegion(t, ctx)).To(Equal("Copied record value: " + record["value"].(string)))

		// Edit in the card: Enter opens the form with the focus in it,
		// Cancel closes it back to the button.
		edit := browser.ShiftTabTo(t, ctx, "Edit "+host, 10)
		g.Expect(edit.Props).To(HaveKeyWithValue("expanded", "false"))
		run(t, ctx, "Enter on Edit", press(browser.KeyEnter))
		f = browser.Focused(t, ctx)
		browser.CheckStop(t, "the edit form's first field", f)
		g.Expect(f.Name).To(Equal("Hostname"))
		g.Expect(f.ID).To(HavePrefix("edit-"))
		g.Expect(tabs(t, ctx, 4)).To(HaveExactElements(
			"textbox Not-found page (optional)", "textbox Expired-link page (optional)", "button Save", "button Cancel"))
		run(t, ctx, "Enter on Cancel", press(browser.KeyEnter))
		f = browser.Focused(t, ctx)
		g.Expect(f.Name).To(Equal("Edit "+host), "Cancel goes back to Edit: %s", f)
		g.Expect(f.Props).To(HaveKeyWithValue("expanded", "false"))
		run(t, ctx, "Enter on Edit again", press(browser.KeyEnter))
		browser.TabTo(t, ctx, "Not-found page (optional)", 2)
		run(t, ctx, "a bad URL, Enter", press("ftp://example.com/"), press(browser.KeyEnter),
			waitTrue(`document.activeElement.getAttribute('aria-invalid') === 'true'`))
		f = browser.Focused(t, ctx)
		browser.CheckStop(t, "the refused page", f)
		g.Expect(f.Name).To(Equal("Not-found page (optional)"))
		g.Expect(f.Description).NotTo(BeEmpty())
		run(t, ctx, "a good URL, Enter", browser.SelectAll(), press("https://example.com/missing"), press(browser.KeyEnter),
			waitTrue(`document.querySelector('li[data-domain="`+host+`"]').textContent.includes('https://example.com/missing')`))
		g.Expect(liveRegion(t, ctx)).To(Equal("Saved " + host + "."))
		f = browser.Focused(t, ctx)
		browser.CheckStop(t, "after saving", f)
		g.Expect(f.Name).To(Equal("Edit "+host), "the saved domain's Edit has the focus: %s", f)

		// Delete, confirmed: the focus goes to the domain that is left.
		browser.TabTo(t, ctx, "Delete "+host, 2)
		run(t, ctx, "Enter on Delete", press(browser.KeyEnter), waitTrue(`!!document.querySelector('dialog[open]')`))
		f = browser.Focused(t, ctx)
		g.Expect(f.Region).To(Equal("dialog"))
		g.Expect(f.Name).To(Equal("Cancel"))
		run(t, ctx, "Shift+Tab, Enter: delete", browser.ShiftTab(), press(browser.KeyEnter),
			waitTrue(`!document.querySelector('li[data-domain="`+host+`"]')`))
		g.Expect(liveRegion(t, ctx)).To(Equal("Deleted " + host + "."))
		f = browser.Focused(t, ctx)
		browser.CheckStop(t, "after deleting", f)
		g.Expect(f.Name).To(Equal("Edit "+other), "the domain left has the focus: %s", f)
	})
}
