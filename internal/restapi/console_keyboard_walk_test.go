package restapi

import (
	"context"
	"fmt"
	"testing"

	"github.com/chromedp/cdproto/browser"
	"github.com/chromedp/chromedp"

	kbrowser "github.com/kurz-dev/kurz/internal/testenv/browser"
)

// The helpers of the keyboard walks (TestConsoleKeyboard*): each walk runs
// at a desktop's width and at the narrowest phone issue 30 names, with the
// same keys and the same expectations, so nothing is reachable only by
// pointer or only on a wide screen.

// keyboardWidths are the window widths every keyboard walk runs at.
var keyboardWidths = []int{1280, 320}

// atEachWidth runs walk as a subtest per width, each in its own browser
// of that width, whose clipboard the page may write and the test read.
func atEachWidth(t *testing.T, walk func(t *testing.T, ctx context.Context)) {
	t.Helper()
	for _, width := range keyboardWidths {
		t.Run(fmt.Sprintf("%dpx", width), func(t *testing.T) {
			ctx := newBrowser(t, width)
			var inner int
			run(t, ctx, "the window's width",
				chromedp.EmulateViewport(int64(width), 900),
				chromedp.Func(func(ctx context.Context, _ *chromedp.Target) error {
					for _, name := range []string{"clipboard-read", "clipboard-write"} {
						if _, err := chromedp.Call(ctx, browser.SetPermission, browser.SetPermissionParams{
							Permission: &browser.PermissionDescriptor{Name: name}, Setting: browser.PermissionSettingGranted,
						}); err != nil {
							return err
						}
					}
					return nil
				}),
				chromedp.Navigate("about:blank"),
				into(chromedp.Evaluate[int](`window.innerWidth`), &inner))
			if inner != width {
				t.Fatalf("the page is %d px wide, want %d", inner, width)
			}
			walk(t, ctx)
		})
	}
}

// keyboardSignIn opens the console at base and signs in with the keys
// alone: the token typed in its field, Enter.
func keyboardSignIn(t *testing.T, ctx context.Context, base, token string) {
	t.Helper()
	run(t, ctx, "sign in by keyboard",
		chromedp.Navigate(base+"/console/"),
		chromedp.WaitVisible(chromedp.CSS(`#token`)),
		titleFocused("Sign in to kurz"),
		kbrowser.Press(kbrowser.KeyTab),
		waitTrue(`document.activeElement.id === 'token'`),
		kbrowser.Press(token),
		kbrowser.Press(kbrowser.KeyEnter),
		titleFocused("Links"))
}

// titleFocused waits until the page's title (its h1) reads title and has
// the focus: a page drawn and announced.
func titleFocused(title string) chromedp.Action[chromedp.Void] {
	return waitTrue(fmt.Sprintf(`document.activeElement.tagName === 'H1' && document.activeElement.textContent === %q`, title))
}

// navigate goes to the header's navigation link name from the page's
// title (where the focus is when a page is drawn), Shift+Tab back into
// the header and Enter, and waits for the new page's title.
func navigate(t *testing.T, ctx context.Context, name, title string) {
	t.Helper()
	for i := range 6 {
		f := kbrowser.Stop(t, ctx, fmt.Sprintf("Shift+Tab %d towards %q", i+1, name), kbrowser.ShiftTab())
		if f.Region == "header" && f.Name == name {
			run(t, ctx, "Enter on "+name, kbrowser.Press(kbrowser.KeyEnter), titleFocused(title))
			return
		}
	}
	t.Fatalf("%q not reached from the title in 6 Shift+Tabs", name)
}

// tabOrder presses Tab from where the focus is until the focus leaves
// the page, checking every stop (kbrowser.TabAround), and returns the
// stops as "role name"; a control with several stops of its own (a date
// field's day, month and year) is listed once.
func tabOrder(t *testing.T, ctx context.Context, max int) []string {
	t.Helper()
	var order []string
	for _, f := range kbrowser.TabAround(t, ctx, max) {
		s := f.Role + " " + f.Name
		if len(order) > 0 && order[len(order)-1] == s {
			continue
		}
		order = append(order, s)
	}
	return order
}

// tabs presses Tab n times and returns the stops as "role name", each
// checked (kbrowser.Stop).
func tabs(t *testing.T, ctx context.Context, n int) []string {
	t.Helper()
	var order []string
	for i := range n {
		f := kbrowser.Stop(t, ctx, fmt.Sprintf("Tab %d", i+1), kbrowser.Press(kbrowser.KeyTab))
		order = append(order, f.Role+" "+f.Name)
	}
	return order
}

// fitsWidth fails t when the page scrolls sideways: at a phone's width
// something would be out of sight (and a focus stop off-screen).
func fitsWidth(t *testing.T, ctx context.Context, page string) {
	t.Helper()
	var over int
	run(t, ctx, "measure "+page, into(chromedp.Evaluate[int](`document.documentElement.scrollWidth - window.innerWidth`), &over))
	if over > 0 {
		t.Errorf("%s scrolls sideways: %d px wider than the window", page, over)
	}
}

// clipboard is what the page last copied.
func clipboard(t *testing.T, ctx context.Context) string {
	t.Helper()
	var s string
	run(t, ctx, "read the clipboard", into(chromedp.Evaluate[string](`navigator.clipboard.readText()`, chromedp.EvalAwaitPromise), &s))
	return s
}
