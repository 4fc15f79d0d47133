package restapi

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/kurz-dev/kurz/internal/testenv/browser"
)

// browserTimeout bounds one browser test's whole conversation.
const browserTimeout = 3 * time.Minute

// The browser helpers live in internal/testenv/browser, shared with
// test/e2e's console test against bin/kurz dev; these are their short names
// here.

// newBrowser starts a headless Chromium for t (or skips t without one),
// with a window of width x 900 pixels.
func newBrowser(t *testing.T, width int) context.Context {
	t.Helper()
	return browser.New(t, width, browserTimeout)
}

// run runs actions, failing t with what was being done.
func run(t *testing.T, ctx context.Context, what string, actions ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	browser.Run(t, ctx, what, actions...)
}

// into runs a, storing its value in dst: a step among others of run.
func into[T any](a chromedp.Action[T], dst *T) chromedp.Action[chromedp.Void] {
	return browser.Into(a, dst)
}

// waitTrue polls a JavaScript expression until it is true.
func waitTrue(expr string) chromedp.Action[chromedp.Void] { return browser.WaitTrue(expr) }

// look checks the page with axe-core and saves its screenshot when asked.
func look(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	browser.Look(t, ctx, name)
}

// signIn opens the console and signs in with token.
func signIn(t *testing.T, ctx context.Context, token string) {
	t.Helper()
	signInAt(t, ctx, baseURL, token)
}

// signInAt opens the console of the server at base and signs in.
func signInAt(t *testing.T, ctx context.Context, base, token string) {
	t.Helper()
	run(t, ctx, "sign in",
		chromedp.Navigate(base+"/console/"),
		chromedp.WaitVisible(chromedp.CSS(`#token`)),
		chromedp.SetValue(chromedp.CSS(`#token`), token),
		chromedp.Click(chromedp.CSS(`form[data-test=signin] button[type=submit]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-test=signout]`)),
	)
}

// rowCount is an expression: the rows of the links table.
func rowCount(n int) string {
	return fmt.Sprintf(`document.querySelectorAll('table[data-test=links] tbody tr').length === %d`, n)
}
