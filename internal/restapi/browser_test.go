package restapi

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
)

// requireChromiumEnv makes the browser tests fail instead of skipping when
// no Chromium is found (.ci/run sets it: CI installs Chromium).
const requireChromiumEnv = "KURZ_REQUIRE_CHROMIUM"

// screenshotsEnv names a directory where the browser tests save their
// screenshots (for docs/console.md); unset, none are taken.
const screenshotsEnv = "KURZ_CONSOLE_SCREENSHOTS"

// browserTimeout bounds one browser test's whole conversation.
const browserTimeout = 3 * time.Minute

// chromium finds Debian's chromium (or another Chrome) on PATH, or skips
// t, saying how to install it; with KURZ_REQUIRE_CHROMIUM=1 it fails.
func chromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "headless-shell"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	msg := "no Chromium on PATH: install Debian's chromium (apt-get install chromium) to run the console's browser tests"
	if os.Getenv(requireChromiumEnv) == "1" {
		t.Fatal(msg + " (" + requireChromiumEnv + "=1 requires them)")
	}
	t.Skip(msg)
	return ""
}

// newBrowser starts a headless Chromium for t and returns a tab's context,
// with a window of width x 900 pixels.
func newBrowser(t *testing.T, width int) context.Context {
	t.Helper()
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chromium(t)),
		// The sandbox needs user namespaces, which root in a container
		// (CI) lacks; the pages are the test's own.
		chromedp.NoSandbox,
		chromedp.WindowSize(width, 900),
	)
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelTab := chromedp.NewContext(allocCtx)
	ctx, cancelTimeout := context.WithTimeout(ctx, browserTimeout)
	t.Cleanup(func() {
		cancelTimeout()
		cancelTab()
		cancelAlloc()
	})
	if err := chromedp.Do(ctx); err != nil { // starts the browser
		t.Fatalf("start %s: %v", chromium(t), err)
	}
	return ctx
}

// run runs actions, failing t with what was being done.
func run(t *testing.T, ctx context.Context, what string, actions ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	if err := chromedp.Do(ctx, actions...); err != nil {
		loc, _ := chromedp.Run(ctx, chromedp.Location())
		t.Fatalf("%s (at %s): %v", what, loc, err)
	}
}

// into runs a, storing its value in dst: a step among others of run.
func into[T any](a chromedp.Action[T], dst *T) chromedp.Action[chromedp.Void] {
	return func(ctx context.Context, t *chromedp.Target) (chromedp.Void, error) {
		v, err := a(ctx, t)
		*dst = v
		return chromedp.Void{}, err
	}
}

// waitTrue polls a JavaScript expression until it is true.
func waitTrue(expr string) chromedp.Action[chromedp.Void] {
	return chromedp.Poll[chromedp.Void](expr, chromedp.WithPollingTimeout(20*time.Second))
}

// axePath is axe-core as `make axe` installs it (hack/axe, pinned).
const axePath = "../../hack/axe/node_modules/axe-core/axe.min.js"

var (
	axeOnce   sync.Once
	axeSource string
)

// look checks the page as it is now: axe-core finds no serious or critical
// accessibility violation, and a screenshot is saved when asked for. Without
// axe-core installed the check is skipped with a note (failed with
// KURZ_REQUIRE_CHROMIUM=1).
func look(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	screenshot(t, ctx, name)
	axeOnce.Do(func() {
		if b, err := os.ReadFile(axePath); err == nil {
			axeSource = string(b)
		}
	})
	if axeSource == "" {
		msg := "axe-core is not installed (make axe): the accessibility check of " + name + " did not run"
		if os.Getenv(requireChromiumEnv) == "1" {
			t.Fatal(msg)
		}
		t.Log(msg)
		return
	}
	// Runtime.evaluate is not subject to the page's CSP, so axe runs
	// without the console allowing any script but its own.
	var violations []string
	run(t, ctx, "axe on "+name,
		chromedp.Evaluate[chromedp.Void](axeSource+";true"),
		into(chromedp.Evaluate[[]string](`axe.run(document, {resultTypes: ['violations']}).then(r => r.violations
			.filter(v => v.impact === 'serious' || v.impact === 'critical')
			.map(v => v.impact + ' ' + v.id + ': ' + v.help + ' at ' + v.nodes.map(n => n.target.join(' ')).join(', ')))`,
			chromedp.EvalAwaitPromise), &violations),
	)
	if len(violations) > 0 {
		t.Errorf("%s: accessibility violations:\n%s", name, strings.Join(violations, "\n"))
	}
}

// screenshot saves the page as name.png in KURZ_CONSOLE_SCREENSHOTS, when
// set.
func screenshot(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	dir := os.Getenv(screenshotsEnv)
	if dir == "" {
		return
	}
	var png []byte
	run(t, ctx, "screenshot "+name, into(chromedp.FullScreenshot(100), &png))
	if err := os.WriteFile(filepath.Join(dir, name+".png"), png, 0o644); err != nil {
		t.Fatalf("save screenshot: %v", err)
	}
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
