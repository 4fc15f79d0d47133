package restapi

import (
	"bytes"
	"context"
	"image/png"
	"net/url"
	"testing"

	cdpbrowser "github.com/chromedp/cdproto/browser"
	"github.com/chromedp/chromedp"
	. "github.com/onsi/gomega"

	"github.com/kurz-dev/kurz/internal/testenv"
	"github.com/kurz-dev/kurz/internal/testenv/browser"
)

// TestConsoleCopyQRAndMarkupURL: the list's Copy puts the short link on
// the clipboard; the QR code's colour, background and size reach the API,
// and what downloads is the API's image for them, in PNG and in SVG; a
// destination URL holding markup is shown as text.
func TestConsoleCopyQRAndMarkupURL(t *testing.T) {
	testenv.Need(t)
	g := NewWithT(t)
	ctx := newBrowser(t, 1280) // first: it skips without Chromium
	run(t, ctx, "let the page use the clipboard", chromedp.Func(func(ctx context.Context, _ *chromedp.Target) error {
		for _, name := range []string{"clipboard-read", "clipboard-write"} {
			if _, err := chromedp.Call(ctx, cdpbrowser.SetPermission, cdpbrowser.SetPermissionParams{
				Permission: &cdpbrowser.PermissionDescriptor{Name: name}, Setting: cdpbrowser.PermissionSettingGranted,
			}); err != nil {
				return err
			}
		}
		return nil
	}))
	w, host := newWorkspaceWithDomain(t)
	// Markup in the query: a valid URL, which a flawed render would turn
	// into an element.
	const markupURL = `https://example.com/?q=<img/src=x/id=injected>`
	l := w.createLink(t, map[string]any{"domain": host, "key": "qr", "url": markupURL})
	id, short := l["id"].(string), l["link"].(string)
	signIn(t, ctx, w.editor.token)

	var copied, shownURL string
	var injected bool
	run(t, ctx, "copy the short link",
		chromedp.WaitVisible(chromedp.CSS(`tr[data-key=qr] [data-test=copy]`)),
		chromedp.Click(chromedp.CSS(`tr[data-key=qr] [data-test=copy]`)),
		waitTrue(`document.querySelector('[role=status]').textContent.startsWith('Copied')`),
		into(chromedp.Evaluate[string](`navigator.clipboard.readText()`, chromedp.EvalAwaitPromise), &copied),
		into(chromedp.Text(chromedp.CSS(`tr[data-key=qr] td.url`)), &shownURL),
		into(chromedp.Evaluate[bool](`document.getElementById('injected') !== null`), &injected),
	)
	g.Expect(copied).To(Equal(short))
	g.Expect(shownURL).To(Equal(markupURL), "the destination as text")
	g.Expect(injected).To(BeFalse(), "markup in the URL made an element")

	// The QR code in dark red on light yellow, 128 px: the page asks the
	// API for those, and the download is the API's answer.
	set := func(sel, value string) chromedp.Action[chromedp.Void] {
		return chromedp.Evaluate[chromedp.Void](`(() => { const e = document.querySelector('` + sel + `'); e.value = '` + value + `'; e.dispatchEvent(new Event('change')); return true })()`)
	}
	run(t, ctx, "a QR code's options",
		chromedp.Click(chromedp.CSS(`tr[data-key=qr] [data-test=qr]`)),
		waitTrue(`(() => { const i = document.querySelector('[data-test=qr-image]'); return !!i && i.complete && i.naturalWidth === 256 })()`),
		set(`#qr-color`, "#aa0000"), set(`#qr-bg`, "#ffffee"), set(`#qr-size`, "128"),
		chromedp.Click(chromedp.CSS(`dialog button[type=submit]`)),
		waitTrue(`(() => { const i = document.querySelector('[data-test=qr-image]'); return !!i && i.complete && i.naturalWidth === 128 })()`),
	)
	pngBytes, name := browser.Download(t, ctx, "download the PNG", chromedp.Click(chromedp.CSS(`[data-test=qr-download]`)))
	g.Expect(name).To(Equal("qr.png"))
	q := url.Values{"color": {"#aa0000"}, "background": {"#ffffee"}, "size": {"128"}}
	want := w.editor.do("PUT", "/api/v1/links/"+id+"/qr-code?"+q.Encode(), nil)
	g.Expect(want.status).To(Equal(200), "%s", want)
	g.Expect(pngBytes).To(Equal(want.raw), "the API's QR code for those options")
	img, err := png.Decode(bytes.NewReader(pngBytes))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(img.Bounds().Dx()).To(Equal(128))
	r, gr, b, _ := img.At(0, 0).RGBA()
	g.Expect([]uint32{r >> 8, gr >> 8, b >> 8}).To(Equal([]uint32{0xff, 0xff, 0xee}), "the corner is the background")

	run(t, ctx, "as SVG",
		set(`#qr-format`, "svg"),
		chromedp.Click(chromedp.CSS(`dialog button[type=submit]`)),
		waitTrue(`document.querySelector('[data-test=qr-download]').getAttribute('download') === 'qr.svg'`),
	)
	svg, name := browser.Download(t, ctx, "download the SVG", chromedp.Click(chromedp.CSS(`[data-test=qr-download]`)))
	g.Expect(name).To(Equal("qr.svg"))
	q.Set("format", "svg")
	want = w.editor.do("PUT", "/api/v1/links/"+id+"/qr-code?"+q.Encode(), nil)
	g.Expect(svg).To(Equal(want.raw), "the API's SVG for those options")
	g.Expect(string(svg)).To(ContainSubstring(`fill="#AA0000"`), "the colour asked for")
}
