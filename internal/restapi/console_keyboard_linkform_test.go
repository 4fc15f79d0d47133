package restapi

import (
	"context"
	"testing"

	"github.com/chromedp/chromedp"
	. "github.com/onsi/gomega"

	"github.com/kurz-dev/kurz/internal/testenv"
	"github.com/kurz-dev/kurz/internal/testenv/browser"
)

// TestConsoleKeyboardLinkForm edits a link with the keys alone, at a
// desktop's and a phone's width: every field of the form is a named stop
// in reading order (the optional ones behind a disclosure opened with
// Enter), the expiry is typed into its date field, and a refused field
// (a bad iOS destination, inside the disclosure) gets the focus, says why
// as its description and is announced; corrected, the save is announced
// and the API holds every field.
func TestConsoleKeyboardLinkForm(t *testing.T) {
	testenv.Need(t)
	atEachWidth(t, func(t *testing.T, ctx context.Context) {
		g := NewWithT(t)
		w, host := newWorkspaceWithDomain(t)
		l := w.createLink(t, map[string]any{"domain": host, "key": "spring", "url": "https://example.com/spring", "tags": []string{"sale"}})
		link, id := l["link"].(string), l["id"].(string)
		press := browser.Press
		keyboardSignIn(t, ctx, baseURL, w.editor.token)

		browser.TabTo(t, ctx, "Edit "+link, 30)
		run(t, ctx, "Enter on Edit", press(browser.KeyEnter), titleFocused("Edit "+link))
		browser.Axe(t, ctx, "link-edit")
		fitsWidth(t, ctx, "the link's form")
		const more = "Expiry, targeting, UTM and more"
		g.Expect(tabOrder(t, ctx, 40)).To(HaveExactElements(
			"combobox Domain", "textbox Key", "textbox Destination URL", "textbox Tags",
			"DisclosureTriangle "+more,
			"button Save", "link Cancel",
		), "the closed form's stops after the title")

		// The disclosure opens with Enter; its fields follow it in the
		// order they show.
		f := browser.TabTo(t, ctx, more, 20)
		g.Expect(f.Props["expanded"]).To(Equal("false"))
		run(t, ctx, "Enter opens it", press(browser.KeyEnter), waitTrue(`document.querySelector('details').open`))
		g.Expect(browser.Focused(t, ctx).Props["expanded"]).To(Equal("true"))
		order := tabOrder(t, ctx, 60)
		g.Expect(order).To(HaveExactElements(
			"DateTime Expires at", "textbox After expiry, go to", "textbox iOS destination", "textbox Android destination",
			"textbox UTM source", "textbox UTM medium", "textbox UTM campaign", "textbox UTM term", "textbox UTM content", "textbox UTM name",
			"textbox External id", "textbox Password",
			"button Save", "link Cancel",
		), "the open form's stops after the disclosure")

		// Fill every optional field by typing, a bad iOS URL among them.
		typeInto := func(name, text string) {
			t.Helper()
			browser.TabTo(t, ctx, name, 30)
			run(t, ctx, "type into "+name, browser.SelectAll(), press(text))
		}
		typeInto("Tags", "sale, spring")
		// A date field takes its parts typed in order (month, day, year,
		// hours, minutes, AM/PM in Chromium's en-US); a part full of digits
		// moves on by itself, but the year (up to 6 digits) wants a Tab.
		browser.TabTo(t, ctx, "Expires at", 30)
		var typed string
		run(t, ctx, "type the expiry", press("12312030"), press(browser.KeyTab), press("1159P"),
			into(chromedp.Evaluate[string](`document.getElementById('link-expires_at').value`), &typed))
		g.Expect(typed).To(Equal("2030-12-31T23:59"), "the expiry as typed")
		typeInto("iOS destination", "ftp://apps.example/spring")
		typeInto("Android destination", "https://play.example/spring")
		typeInto("UTM source", "newsletter")
		typeInto("UTM campaign", "spring")
		typeInto("External id", "42")
		typeInto("Password", "open sesame")
		run(t, ctx, "Enter: save", press(browser.KeyEnter),
			waitTrue(`document.querySelector('[data-test=err-ios]').textContent !== ''`))
		refused := w.editor.do("PUT", "/api/v1/links/"+id, map[string]any{"domain": host, "key": "spring", "url": "https://example.com/spring", "ios": "ftp://apps.example/spring"})
		g.Expect(refused.fieldErrors("ios")).To(HaveLen(1), "%s", refused)
		f = browser.Focused(t, ctx)
		browser.CheckStop(t, "the refused field", f)
		g.Expect(f.ID).To(Equal("link-ios"), "the refused field has the focus: %s", f)
		g.Expect(f.Invalid).To(BeTrue())
		g.Expect(f.Description).To(ContainSubstring(refused.fieldErrors("ios")[0]))
		g.Expect(liveRegion(t, ctx)).To(Equal(refused.body["message"]), "the refusal is announced")
		browser.Axe(t, ctx, "link-edit-error")

		run(t, ctx, "correct it and Enter", browser.SelectAll(), press("https://apps.example/spring"), press(browser.KeyEnter),
			titleFocused("Links"))
		g.Expect(liveRegion(t, ctx)).To(Equal("Saved " + link + "."))
		var expires string
		run(t, ctx, "the expiry as the API has it",
			into(chromedp.Evaluate[string](`new Date('2030-12-31T23:59').toISOString()`), &expires))
		saved := w.viewer.do("GET", "/api/v1/links/"+id, nil).body
		g.Expect(saved).To(HaveKeyWithValue("tags", ConsistOf("sale", "spring")))
		g.Expect(saved).To(HaveKeyWithValue("expires_at", HavePrefix(expires[:16])))
		g.Expect(saved).To(HaveKeyWithValue("ios", "https://apps.example/spring"))
		g.Expect(saved).To(HaveKeyWithValue("android", "https://play.example/spring"))
		g.Expect(saved).To(HaveKeyWithValue("utm_source", "newsletter"))
		g.Expect(saved).To(HaveKeyWithValue("utm_campaign", "spring"))
		g.Expect(saved).To(HaveKeyWithValue("external_id", BeNumerically("==", 42)))
		g.Expect(saved).To(HaveKeyWithValue("password", Not(BeNil())))
	})
}
