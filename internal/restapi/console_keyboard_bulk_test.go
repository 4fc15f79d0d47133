package restapi

import (
	"context"
	"testing"

	. "github.com/onsi/gomega"

	"github.com/kurz-dev/kurz/internal/testenv"
	"github.com/kurz-dev/kurz/internal/testenv/browser"
)

// TestConsoleKeyboardBulk selects links with Space, tags them and deletes
// them through the bulk bar with the keys alone, at a desktop's and a
// phone's width: the selection's count is the tag field's description,
// every outcome is announced, the focus stays on the control that acted
// (a redrawn list would otherwise drop it on the title), and deleting a
// single link moves the focus to the row that took its place.
func TestConsoleKeyboardBulk(t *testing.T) {
	testenv.Need(t)
	atEachWidth(t, func(t *testing.T, ctx context.Context) {
		g := NewWithT(t)
		w, host := newWorkspaceWithDomain(t)
		links := map[string]string{}
		for _, key := range []string{"a1", "b2", "c3", "d4", "e5"} {
			links[key] = w.createLink(t, map[string]any{"domain": host, "key": key, "url": "https://example.com/" + key})["link"].(string)
		}
		press := browser.Press
		keyboardSignIn(t, ctx, baseURL, w.editor.token)
		run(t, ctx, "the list", waitTrue(rowCount(5)))
		fitsWidth(t, ctx, "the links list")
		g.Expect(browser.AXTree(t, ctx).Names("group")).To(ContainElement("Selected links"))

		// Space checks a row's box (the list is newest first: e5 to a1);
		// the count is what the bulk bar's tag field says it acts on.
		selectRows := func(keys ...string) {
			t.Helper()
			for _, key := range keys {
				browser.TabTo(t, ctx, "Select "+links[key], 40)
				run(t, ctx, "Space selects "+key, press(browser.KeySpace))
				f := browser.Focused(t, ctx)
				g.Expect(f.Props).To(HaveKeyWithValue("checked", "true"), "%s is checked", f)
			}
		}
		selectRows("b2", "a1")
		f := browser.ShiftTabTo(t, ctx, "Tag", 40)
		g.Expect(f.Role).To(Equal("textbox"), "the bulk bar's Tag comes before the filter's")
		g.Expect(f.Description).To(Equal("2 selected"))
		run(t, ctx, "type a tag", press("spring"))
		browser.TabTo(t, ctx, "Add tag", 2)
		run(t, ctx, "Enter: add the tag", press(browser.KeyEnter),
			waitTrue(`document.querySelectorAll('table[data-test=links] .tag').length === 2`))
		g.Expect(liveRegion(t, ctx)).To(Equal("Added the tag spring to 2 links."))
		f = browser.Focused(t, ctx)
		browser.CheckStop(t, "after the bulk tag", f)
		g.Expect(f.Name).To(Equal("Add tag"), "the focus stays on the button that acted: %s", f)
		r := w.viewer.do("GET", "/api/v1/links?tag=spring&sort=key", nil)
		g.Expect(r.body["data"]).To(HaveExactElements(HaveKeyWithValue("key", "a1"), HaveKeyWithValue("key", "b2")), "%s", r)

		// Bulk delete asks first (Cancel has the focus), Escape keeps
		// everything, the dialog's Delete deletes.
		selectRows("c3", "a1")
		opener := browser.ShiftTabTo(t, ctx, "Delete selected", 40)
		run(t, ctx, "Enter on Delete selected", press(browser.KeyEnter), waitTrue(`!!document.querySelector('dialog[open]')`))
		f = browser.Focused(t, ctx)
		g.Expect(f.Region).To(Equal("dialog"))
		g.Expect(f.Name).To(Equal("Cancel"))
		g.Expect(browser.AXTree(t, ctx).Names("dialog")).To(Equal([]string{"Delete 2 links?"}))
		run(t, ctx, "Escape", press(browser.KeyEscape), waitTrue(`!document.querySelector('dialog')`))
		g.Expect(browser.Focused(t, ctx).Name).To(Equal(opener.Name), "Escape goes back to the opener")
		g.Expect(w.viewer.do("GET", "/api/v1/links", nil).body["meta"]).To(HaveKeyWithValue("total", BeNumerically("==", 5)))
		run(t, ctx, "Enter again", press(browser.KeyEnter), waitTrue(`!!document.querySelector('dialog[open]')`))
		f = browser.Stop(t, ctx, "Shift+Tab to the dialog's Delete", browser.ShiftTab())
		g.Expect(f.Name).To(Equal("Delete"))
		run(t, ctx, "Enter: delete", press(browser.KeyEnter), waitTrue(rowCount(3)))
		g.Expect(liveRegion(t, ctx)).To(Equal("Deleted 2 links."))
		f = browser.Focused(t, ctx)
		browser.CheckStop(t, "after the bulk delete", f)
		g.Expect(f.Name).To(Equal("Delete selected"), "the focus stays on the button that acted: %s", f)
		g.Expect(w.viewer.do("GET", "/api/v1/links", nil).body["meta"]).To(HaveKeyWithValue("total", BeNumerically("==", 3)))

		// One link's Delete: the focus goes to the row that took its place
		// (the next one), to the one before when it was the last, to the
		// list's title when none is left; the deletion is announced.
		deleteOne := func(key string, rows int) browser.Focus {
			t.Helper()
			browser.TabTo(t, ctx, "Delete "+links[key], 40)
			run(t, ctx, "Enter on Delete "+key, press(browser.KeyEnter), waitTrue(`!!document.querySelector('dialog[open]')`))
			left := waitTrue(rowCount(rows))
			if rows == 0 {
				left = waitTrue(`!!document.querySelector('[data-test=no-links]')`)
			}
			run(t, ctx, "Shift+Tab, Enter: delete "+key, browser.ShiftTab(), press(browser.KeyEnter), left)
			g.Expect(liveRegion(t, ctx)).To(Equal("Deleted " + links[key] + "."))
			f := browser.Focused(t, ctx)
			if rows > 0 { // a title with the focus is no stop of Tab's: no indicator
				browser.CheckStop(t, "after deleting "+key, f)
			}
			return f
		}
		f = deleteOne("d4", 2)
		g.Expect(f.Name).To(Equal("Select "+links["b2"]), "the next row has the focus: %s", f)
		f = deleteOne("b2", 1)
		g.Expect(f.Name).To(Equal("Select "+links["e5"]), "the row before has the focus: %s", f)
		f = deleteOne("e5", 0)
		g.Expect(f.Role).To(Equal("heading"), "the last link gone, the list's title has the focus: %s", f)
		g.Expect(f.Name).To(Equal("Links"))
	})
}
