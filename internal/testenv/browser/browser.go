package browser

import (
	"context"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// RequireChromiumEnv makes the browser tests fail instead of skipping when
// no Chromium (or no axe-core) is found (.ci/run sets it: CI installs both).
const RequireChromiumEnv = "KURZ_REQUIRE_CHROMIUM"

// required reports whether KURZ_REQUIRE_CHROMIUM=1.
func required() bool { return os.Getenv(RequireChromiumEnv) == "1" }

// Chromium finds Debian's chromium (or another Chrome) on PATH, or skips
// t, saying how to install it; with KURZ_REQUIRE_CHROMIUM=1 it fails.
func Chromium(t testing.TB) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "headless-shell"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	msg := "no Chromium on PATH: install Debian's chromium (apt-get install chromium) to run the console's browser tests"
	if required() {
		t.Fatal(msg + " (" + RequireChromiumEnv + "=1 requires them)")
	}
	t.Skip(msg)
	return ""
}

// New starts a headless Chromium for t and returns a tab's context, with a
// window of width x 900 pixels; timeout bounds the whole conversation.
func New(t testing.TB, width int, timeout time.Duration) context.Context {
	t.Helper()
	exe := Chromium(t)
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(exe),
		// The sandbox needs user namespaces, which root in a container
		// (CI) lacks; the pages are the test's own.
		chromedp.NoSandbox,
		chromedp.WindowSize(width, 900),
		// Headless Chromium leaves its singleton directory
		// (org.chromium.Chromium.*) in TMPDIR even when closed: one per
		// test, in the test's own directory, removed with it.
		chromedp.Env("TMPDIR="+t.TempDir()),
	)
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelTab := chromedp.NewContext(allocCtx)
	ctx, cancelTimeout := context.WithTimeout(ctx, timeout)
	t.Cleanup(func() {
		cancelTimeout()
		cancelTab()
		cancelAlloc()
	})
	if err := chromedp.Do(ctx); err != nil { // starts the browser
		t.Fatalf("start %s: %v", exe, err)
	}
	return ctx
}

// stepTimeout bounds one Run: an element that never shows fails the test
// with the step's name, instead of waiting out the whole conversation.
const stepTimeout = time.Minute

// Run runs actions, failing t with what was being done and where.
func Run(t testing.TB, ctx context.Context, what string, actions ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	stepCtx, cancel := context.WithTimeout(ctx, stepTimeout)
	defer cancel()
	if err := chromedp.Do(stepCtx, actions...); err != nil {
		loc, _ := chromedp.Run(ctx, chromedp.Location())
		t.Fatalf("%s (at %s): %v", what, loc, err)
	}
}

// Into runs a, storing its value in dst: a step among others of Run.
func Into[T any](a chromedp.Action[T], dst *T) chromedp.Action[chromedp.Void] {
	return func(ctx context.Context, t *chromedp.Target) (chromedp.Void, error) {
		v, err := a(ctx, t)
		*dst = v
		return chromedp.Void{}, err
	}
}

// WaitTrue polls a JavaScript expression until it is true (20 s at most).
func WaitTrue(expr string) chromedp.Action[chromedp.Void] {
	return chromedp.Poll[chromedp.Void](expr, chromedp.WithPollingTimeout(20*time.Second))
}
