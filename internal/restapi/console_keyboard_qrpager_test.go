package restapi

import (
	"bytes"
	"context"
	"fmt"
	"testing"

	"github.com/chromedp/chromedp"
	. "github.com/onsi/gomega"

	"github.com/kurz-dev/kurz/internal/testenv"
	"github.com/kurz-dev/kurz/internal/testenv/browser"
)

// TestConsoleKeyboardQRAndPager walks the QR code's dialog and the links
// list's pages with the keys alone, at a desktop's and a phone's width:
// the dialog opens with the focus inside and keeps it there, its Download
// saves the API's PNG, Close gives the focus back to the button that
// opened it; Next and Previous are links of a navigation named "Pages",
// the current page is marked aria-current=page and is no link, each page
// drawn with its title focused, and nothing scrolls sideways.
func TestConsoleKeyboardQRAndPager(t *testing.T) {
	testenv.Need(t)
	atEachWidth(t, func(t *testing.T, ctx context.Context) {
		g := NewWithT(t)
		w, host := newWorkspaceWithDomain(t)
		// 26 links: a full page of 25, newest first, and one on page 2.
		links := map[string]string{}
		for i := range 26 {
			key := fmt.Sprintf("p%02d", i)
			links[key] = w.createLink(t, map[string]any{"domain": host, "key": key, "url": "https://example.com/" + key})["link"].(string)
		}
		press := browser.Press
		keyboardSignIn(t, ctx, baseURL, w.viewer.token)
		run(t, ctx, "the first page", waitTrue(rowCount(25)))
		fitsWidth(t, ctx, "the links list")

		// The QR code's dialog, from the first row's QR.
		opener := browser.TabTo(t, ctx, "QR code of "+links["p25"], 40)
		run(t, ctx, "Enter on QR", press(browser.KeyEnter), chromedp.WaitVisible(chromedp.CSS(`dialog[open] [data-test=qr-image]`)),
			waitTrue(`document.querySelector('[data-test=qr-download]').hasAttribute('href')`))
		f := browser.Focused(t, ctx)
		browser.CheckStop(t, "the QR dialog's first focus", f)
		g.Expect(f.Region).To(Equal("dialog"), "the focus is in the dialog: %s", f)
		g.Expect(f.Name).To(Equal("Colour"))
		g.Expect(browser.AXTree(t, ctx).Names("dialog")).To(Equal([]string{"QR code for " + links["p25"]}))
		var inside bool
		run(t, ctx, "measure the dialog", into(chromedp.Evaluate[bool](`(() => { const r = document.querySelector('dialog[open]').getBoundingClientRect(); return r.left >= 0 && r.right <= innerWidth })()`), &inside))
		g.Expect(inside).To(BeTrue(), "the dialog fits the window")
		fitsWidth(t, ctx, "the QR dialog")
		var stops []string
		for range 8 {
			f = browser.Stop(t, ctx, "Tab in the QR dialog", press(browser.KeyTab))
			g.Expect(f.Region).To(Equal("dialog"), "Tab left the QR dialog: %s", f)
			stops = append(stops, f.Name)
		}
		g.Expect(stops).To(HaveExactElements("Background", "Size (px)", "Format", "Update", "Download", "Close", "Colour", "Background"))
		// From Background: Colour, then round to Close.
		for range 2 {
			f = browser.Stop(t, ctx, "Shift+Tab in the QR dialog", browser.ShiftTab())
			g.Expect(f.Region).To(Equal("dialog"), "Shift+Tab left the QR dialog: %s", f)
		}
		g.Expect(f.Name).To(Equal("Close"), "Shift+Tab from the first control goes round to the last")
		f = browser.ShiftTabTo(t, ctx, "Download", 1)
		png, name := browser.Download(t, ctx, "Enter on Download", press(browser.KeyEnter))
		g.Expect(name).To(Equal("p25.png"))
		g.Expect(bytes.HasPrefix(png, []byte("\x89PNG\r\n\x1a\n"))).To(BeTrue(), "the download is a PNG")
		f = browser.Focused(t, ctx)
		g.Expect(f.Region).To(Equal("dialog"), "the focus stays in the dialog after the download: %s", f)
		browser.TabTo(t, ctx, "Close", 1)
		run(t, ctx, "Enter on Close", press(browser.KeyEnter), chromedp.WaitNotPresent(chromedp.CSS(`dialog`)))
		f = browser.Focused(t, ctx)
		browser.CheckStop(t, "after the QR dialog", f)
		g.Expect(f.Name).To(Equal(opener.Name), "the focus is back on the opener: %s", f)

		// The pages: Next, after the 25 rows.
		browser.TabTo(t, ctx, "Next", 120)
		ax := browser.AXTree(t, ctx)
		g.Expect(ax.Names("navigation")).To(ContainElement("Pages"))
		for _, n := range ax.Find("navigation") {
			if n.Name == "Pages" {
				g.Expect(n.Text()).To(Equal("1 2 Next"), "the pager's text: the current page, the others, Next")
			}
		}
		g.Expect(ax.Names("link")).To(ContainElements("Page 2", "Next"), "the other page's link says what it is")
		g.Expect(pagerCurrent(t, ctx, ax)).To(Equal("1"), "a screen reader hears page 1 is the current one")
		run(t, ctx, "Enter on Next", press(browser.KeyEnter), waitTrue(rowCount(1)),
			waitTrue(`location.hash.includes('page=2')`), titleFocused("Links"),
			waitTrue(`document.querySelector('tr[data-key=p00]') !== null`))
		fitsWidth(t, ctx, "the second page")
		g.Expect(pagerCurrent(t, ctx, browser.AXTree(t, ctx))).To(Equal("2"), "the mark moved to page 2")
		f = browser.TabTo(t, ctx, "Previous", 20)
		g.Expect(f.Role).To(Equal("link"))
		f = browser.Stop(t, ctx, "Tab past Previous", press(browser.KeyTab))
		g.Expect(f.Name).To(Equal("Page 1"))
		run(t, ctx, "Enter on Page 1", press(browser.KeyEnter), waitTrue(rowCount(25)),
			waitTrue(`location.hash.includes('page=1')`), titleFocused("Links"))
		fitsWidth(t, ctx, "the first page again")
		f = browser.TabTo(t, ctx, "Next", 120)
		g.Expect(f.OnScreen).To(BeTrue())
	})
}

// pagerCurrent returns the text of the one node of the "Pages" navigation
// in the accessibility tree ax whose element says aria-current=page, and
// checks it is text, not a link or a stop of the Tab key (a link to the
// page one is on would be a dead stop). The mark is read off the node's
// element: Chromium's Accessibility domain has no property for
// aria-current (browser.DOMAttributes says why), but it keeps the marked
// element as a node of its own, which an unmarked span is not.
func pagerCurrent(t *testing.T, ctx context.Context, ax *browser.AXNode) string {
	t.Helper()
	var pager *browser.AXNode
	for _, n := range ax.Find("navigation") {
		if n.Name == "Pages" {
			pager = n
		}
	}
	if pager == nil {
		t.Fatal("no navigation named Pages in the accessibility tree")
	}
	var marked []*browser.AXNode
	var walk func(*browser.AXNode)
	walk = func(n *browser.AXNode) {
		for _, c := range n.Children {
			if !c.Ignored && c.Role != "StaticText" && c.Role != "InlineTextBox" && c.DOMNode != 0 {
				if v, ok := browser.DOMAttributes(t, ctx, c)["aria-current"]; ok {
					if v != "page" {
						t.Errorf("the pager's %s %q says aria-current=%q, not page", c.Role, c.Text(), v)
					}
					marked = append(marked, c)
				}
			}
			walk(c)
		}
	}
	walk(pager)
	if len(marked) != 1 {
		t.Fatalf("the pager %q has %d nodes marked aria-current, want 1", pager.Text(), len(marked))
	}
	cur := marked[0]
	if cur.Role == "link" || cur.Props["focusable"] == "true" {
		t.Errorf("the current page is a %s (focusable %q): it should be text", cur.Role, cur.Props["focusable"])
	}
	return cur.Text()
}
