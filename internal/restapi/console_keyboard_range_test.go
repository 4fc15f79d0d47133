package restapi

import (
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	. "github.com/onsi/gomega"

	"github.com/kurz-dev/kurz/internal/testenv"
	"github.com/kurz-dev/kurz/internal/testenv/browser"
)

// TestConsoleKeyboardRangeQuickly presses the range radios' arrow keys on a
// link's page faster than the API answers: five arrows before the first
// range's data came back. The focus and the checked radio must end on the
// last one, and the numbers shown must be the last range's. (The whole
// page was drawn again for each range, so a redraw for an earlier arrow
// put the focus back on that arrow's radio, or on the title, and an
// earlier range's numbers could be drawn last.)
func TestConsoleKeyboardRangeQuickly(t *testing.T) {
	testenv.Need(t)
	g := NewWithT(t)
	ctx := newBrowser(t, 1280)
	w, host := newWorkspaceWithDomain(t)
	link := linkWithClicks(t, w, host, "quick")
	press := browser.Press

	keyboardSignIn(t, ctx, analyticsURL, w.viewer.token)
	browser.TabTo(t, ctx, "Details and analytics of "+link, 30)
	run(t, ctx, "Enter on Details", press(browser.KeyEnter), titleFocused(link),
		waitTrue(`document.querySelector('[data-test=total-clicks]')?.textContent === '5'`))
	browser.TabTo(t, ctx, "7 days", 20)

	// From 7 days: 30 days, 90 days, 30 days, 7 days, 24 hours, each
	// arrow sent as soon as the one before was, while the API is held.
	held := browser.Hold(t, ctx, "*/api/v1/*")
	run(t, ctx, "five arrows",
		press(browser.KeyArrowDown), press(browser.KeyArrowDown),
		press(browser.KeyArrowUp), press(browser.KeyArrowUp), press(browser.KeyArrowUp),
		waitTrue(`document.querySelector('[data-test=range-24h]')?.checked === true`))
	g.Expect(held.Paused()).To(BeNumerically(">", 0), "the arrows' requests were held: nothing was drawn again meanwhile")
	held.Release()

	// Settled: the last range's numbers, nothing loading, and the focus
	// and the check still on the last radio.
	const state = `({hash: location.hash.replace(/^.*\?/, ''), focus: document.activeElement.dataset.test || document.activeElement.tagName,
		checked: document.querySelector('[name=interval]:checked')?.value || '', total: document.querySelector('[data-test=total-clicks]')?.textContent || '',
		busy: !!document.querySelector('[aria-busy=true]'), status: document.getElementById('status').textContent})`
	type pageState struct {
		Hash, Focus, Checked, Total, Status string
		Busy                                bool
	}
	want := pageState{Hash: "interval=24h", Focus: "range-24h", Checked: "24h", Total: "2", Status: "2 clicks, 1 unique visitor in the last 24 hours."}
	var got pageState
	g.Eventually(func() pageState {
		run(t, ctx, "read the page", into(chromedp.Evaluate[pageState](state), &got))
		return got
	}).WithTimeout(20*time.Second).WithPolling(100*time.Millisecond).Should(Equal(want), "the page after the arrows")

	// Every answer held is in (the earlier ranges' too, which must not be
	// drawn over the last one's): still the last range.
	g.Eventually(func() int {
		var n int
		run(t, ctx, "count the API's answers", into(chromedp.Evaluate[int](`performance.getEntriesByType('resource').filter((e) => e.name.includes('/api/v1/') && e.responseEnd > 0).length`), &n))
		return n
	}).WithTimeout(20 * time.Second).Should(BeNumerically(">=", held.Paused()))
	run(t, ctx, "read the page again", into(chromedp.Evaluate[pageState](state), &got))
	g.Expect(got).To(Equal(want), "the page once every answer was in")
	f := browser.Focused(t, ctx)
	browser.CheckStop(t, "after the arrows", f)
	g.Expect(f.Name).To(Equal("24 hours"))
	g.Expect(f.Props).To(HaveKeyWithValue("checked", "true"))
}
