package browser

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	cdpbrowser "github.com/chromedp/cdproto/browser"
	"github.com/chromedp/chromedp"
)

// Download runs actions, which must make the page download one file (a
// click on a download link, a blob: URL saved by script), and returns the
// file's content and the name the page gave it, as Chromium saved it in a
// directory of t's.
func Download(t testing.TB, ctx context.Context, what string, actions ...chromedp.Action[chromedp.Void]) (content []byte, name string) {
	t.Helper()
	dir := t.TempDir()
	// Subscribed before the click, so no event is missed.
	progress := chromedp.Events(ctx, cdpbrowser.DownloadProgress)
	begin := chromedp.Events(ctx, cdpbrowser.DownloadWillBegin)
	allow := chromedp.Func(func(ctx context.Context, _ *chromedp.Target) error {
		// AllowAndName saves the file under its GUID: no clash, no
		// guessing what Chromium made of the suggested name.
		_, err := chromedp.Call(ctx, cdpbrowser.SetDownloadBehavior, cdpbrowser.SetDownloadBehaviorParams{
			Behavior: cdpbrowser.SetDownloadBehaviorBehaviorAllowAndName, DownloadPath: dir, EventsEnabled: new(true),
		})
		return err
	})
	Run(t, ctx, what, append([]chromedp.Action[chromedp.Void]{allow}, actions...)...)
	for ev, err := range begin {
		if err != nil {
			t.Fatalf("%s: no download began: %v", what, err)
		}
		name = ev.SuggestedFilename
		break
	}
	for ev, err := range progress {
		if err != nil {
			t.Fatalf("%s: the download did not finish: %v", what, err)
		}
		switch ev.State {
		case cdpbrowser.DownloadProgressStateCanceled:
			t.Fatalf("%s: the download was cancelled", what)
		case cdpbrowser.DownloadProgressStateCompleted:
			b, err := os.ReadFile(filepath.Join(dir, ev.GUID))
			if err != nil {
				t.Fatalf("%s: read the download: %v", what, err)
			}
			return b, name
		}
	}
	t.Fatalf("%s: the download did not finish", what)
	return nil, ""
}
