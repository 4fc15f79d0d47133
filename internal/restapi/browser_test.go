package restapi

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
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

// sessionCookieIn returns the browser's session cookie for the API at
// base, or nil: read through the DevTools protocol, since the page itself
// cannot (HttpOnly).
func sessionCookieIn(t *testing.T, ctx context.Context, base string) *network.Cookie {
	t.Helper()
	res, err := chromedp.Call(ctx, network.GetCookies, network.GetCookiesParams{URLs: []string{base + "/api/v1/me"}})
	if err != nil {
		t.Fatalf("read the browser's cookies: %v", err)
	}
	for _, c := range res.Cookies {
		if c.Name == sessionCookie {
			return c
		}
	}
	return nil
}

// fetchStatus is an expression: the status of a same-origin fetch from the
// page (the session cookie goes with it), with extra init fields.
func fetchStatus(method, path, init string) chromedp.Action[int] {
	return chromedp.Evaluate[int](fmt.Sprintf(`fetch(%q, {method: %q, credentials: 'same-origin', headers: {'Content-Type': 'application/json'}%s}).then(r => r.status)`,
		path, method, init), chromedp.EvalAwaitPromise)
}

// inStorage is an expression: whether anything is in the page's storage
// or in the cookies its scripts can read.
const inStorage = `sessionStorage.length > 0 || localStorage.length > 0 || document.cookie !== ''`

// rowCount is an expression: the rows of the links table.
func rowCount(n int) string {
	return fmt.Sprintf(`document.querySelectorAll('table[data-test=links] tbody tr').length === %d`, n)
}
