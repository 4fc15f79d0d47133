package browser

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/kurz-dev/kurz/internal/testenv"
)

// ScreenshotsEnv names a directory where the browser tests save their
// screenshots (for docs/console.md); unset, none are taken.
const ScreenshotsEnv = "KURZ_CONSOLE_SCREENSHOTS"

// axePath is axe-core as `make axe` installs it (hack/axe, pinned), from
// the repository's root.
const axePath = "hack/axe/node_modules/axe-core/axe.min.js"

var (
	axeOnce   sync.Once
	axeSource string
)

// Look checks the page as it is now: axe-core finds no serious or critical
// accessibility violation, and a screenshot is saved when asked for. Without
// axe-core installed the check is skipped with a note (failed with
// KURZ_REQUIRE_CHROMIUM=1).
func Look(t testing.TB, ctx context.Context, name string) {
	t.Helper()
	Screenshot(t, ctx, name)
	Axe(t, ctx, name)
}

// Axe checks the page with axe-core as Look does, without a screenshot
// (for tests whose pages are not the docs' pictures).
func Axe(t testing.TB, ctx context.Context, name string) {
	t.Helper()
	axeOnce.Do(func() {
		if b, err := os.ReadFile(filepath.Join(testenv.RepoRoot(), axePath)); err == nil {
			axeSource = string(b)
		}
	})
	if axeSource == "" {
		msg := "axe-core is not installed (make axe): the accessibility check of " + name + " did not run"
		if required() {
			t.Fatal(msg)
		}
		t.Log(msg)
		return
	}
	// Runtime.evaluate is not subject to the page's CSP, so axe runs
	// without the console allowing any script but its own.
	var violations []string
	Run(t, ctx, "axe on "+name,
		chromedp.Evaluate[chromedp.Void](axeSource+";true"),
		Into(chromedp.Evaluate[[]string](`axe.run(document, {resultTypes: ['violations']}).then(r => r.violations
			.filter(v => v.impact === 'serious' || v.impact === 'critical')
			.map(v => v.impact + ' ' + v.id + ': ' + v.help + ' at ' + v.nodes.map(n => n.target.join(' ')).join(', ')))`,
			chromedp.EvalAwaitPromise), &violations),
	)
	if len(violations) > 0 {
		t.Errorf("%s: accessibility violations:\n%s", name, strings.Join(violations, "\n"))
	}
}

// Screenshot saves the page as name.png in KURZ_CONSOLE_SCREENSHOTS, when
// set.
func Screenshot(t testing.TB, ctx context.Context, name string) {
	t.Helper()
	dir := os.Getenv(ScreenshotsEnv)
	if dir == "" {
		return
	}
	var png []byte
	Run(t, ctx, "screenshot "+name, Into(chromedp.FullScreenshot(100), &png))
	if err := os.WriteFile(filepath.Join(dir, name+".png"), png, 0o644); err != nil {
		t.Fatalf("save screenshot: %v", err)
	}
}
