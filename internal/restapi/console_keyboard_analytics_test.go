package restapi

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	. "github.com/onsi/gomega"

	"github.com/kurz-dev/kurz/internal/analytics"
	"github.com/kurz-dev/kurz/internal/testenv"
	"github.com/kurz-dev/kurz/internal/testenv/browser"
)

// TestConsoleKeyboardAnalytics reads a link's analytics and the
// workspace's with the keys alone, at a desktop's and a phone's width: the
// range's radios move with the arrow keys (each a new range, announced,
// the focus kept on the radio), a custom range is typed into the date
// fields and applied with Enter, the chart's numbers open from their
// disclosure, the top lists are named regions a screen reader finds, and
// the CSV is chosen with the arrows and downloaded with Enter.
func TestConsoleKeyboardAnalytics(t *testing.T) {
	testenv.Need(t)
	atEachWidth(t, func(t *testing.T, ctx context.Context) {
		g := NewWithT(t)
		w, host := newWorkspaceWithDomain(t)
		link := linkWithClicks(t, w, host, "kbd")
		press := browser.Press
		totalIs := func(n string) chromedp.Action[chromedp.Void] {
			return waitTrue(`document.querySelector('[data-test=total-clicks]')?.textContent === '` + n + `'`)
		}

		keyboardSignIn(t, ctx, analyticsURL, w.viewer.token)
		browser.TabTo(t, ctx, "Details and analytics of "+link, 30)
		run(t, ctx, "Enter on Details", press(browser.KeyEnter), titleFocused(link),
			chromedp.WaitVisible(chromedp.CSS(`[data-test=chart]`)), totalIs("5"))
		browser.Axe(t, ctx, "link-analytics")
		fitsWidth(t, ctx, "the link's analytics")
		g.Expect(tabOrder(t, ctx, 40)).To(HaveExactElements(
			"button Copy "+link, "button QR code of "+link,
			"radio 7 days", "Date From", "Date To (included)", "button Show",
			"DisclosureTriangle Show the numbers",
			"combobox CSV of", "button Download CSV",
		), "the stops after the title")
		ax := browser.AXTree(t, ctx)
		g.Expect(ax.Names("group")).To(ContainElement("Range"), "the radios are a group named by its legend")
		g.Expect(ax.Names("image")).To(ContainElement(HavePrefix("Clicks per day")), "the chart is an image named by its title")
		g.Expect(ax.Names("region")).To(ContainElements("Analytics", "Countries", "Devices", "Referrers"), "the top lists are named regions")
		for _, r := range ax.Find("region") {
			if r.Name == "Countries" {
				g.Expect(r.Text()).To(Equal("Countries DE 3 FR 2"), "a screen reader reads the top countries with their counts")
			}
		}

		// The arrows move through the ranges; each one is shown and said.
		browser.TabTo(t, ctx, "7 days", 20)
		run(t, ctx, "ArrowUp: 24 hours", press(browser.KeyArrowUp),
			waitTrue(`location.hash.endsWith('interval=24h')`), totalIs("2"),
			waitTrue(`document.activeElement.dataset.test === 'range-24h'`))
		f := browser.Focused(t, ctx)
		browser.CheckStop(t, "after the range changed", f)
		g.Expect(f.Name).To(Equal("24 hours"))
		g.Expect(f.Props).To(HaveKeyWithValue("checked", "true"))
		g.Expect(liveRegion(t, ctx)).To(Equal("2 clicks, 1 unique visitor in the last 24 hours."))
		run(t, ctx, "ArrowDown: 7 days", press(browser.KeyArrowDown),
			waitTrue(`location.hash.endsWith('interval=7d')`), totalIs("5"),
			waitTrue(`document.activeElement.dataset.test === 'range-7d'`))
		g.Expect(liveRegion(t, ctx)).To(Equal("5 clicks, 2 unique visitors in the last 7 days."))

		// Custom: the last radio (ArrowUp from the first wraps to it), then
		// the dates typed, Enter.
		var from, to string
		run(t, ctx, "the dates",
			into(chromedp.Evaluate[string](`(() => { const d = new Date(Date.now() - 86400e3); return String(d.getMonth() + 1).padStart(2, '0') + String(d.getDate()).padStart(2, '0') + d.getFullYear() })()`), &from),
			into(chromedp.Evaluate[string](`(() => { const d = new Date(); return String(d.getMonth() + 1).padStart(2, '0') + String(d.getDate()).padStart(2, '0') + d.getFullYear() })()`), &to))
		run(t, ctx, "ArrowUp twice: Custom", press(browser.KeyArrowUp), waitTrue(`location.hash.endsWith('interval=24h')`), totalIs("2"),
			waitTrue(`document.activeElement.dataset.test === 'range-24h'`),
			press(browser.KeyArrowUp), waitTrue(`document.activeElement.dataset.test === 'range-custom'`))
		f = browser.Stop(t, ctx, "Tab to From", press(browser.KeyTab))
		g.Expect(f.Name).To(Equal("From"))
		var typed []string
		run(t, ctx, "type From", press(from))
		// The date field's calendar button is a stop of its own.
		browser.TabTo(t, ctx, "To (included)", 3)
		run(t, ctx, "type To", press(to),
			into(chromedp.Evaluate[[]string](`[document.getElementById('range-start').value, document.getElementById('range-end').value, document.activeElement.id]`), &typed))
		g.Expect(typed).To(Equal([]string{from[4:] + "-" + from[:2] + "-" + from[2:4], to[4:] + "-" + to[:2] + "-" + to[2:4], "range-end"}), "the dates as typed")
		// The 24 hours had 2 clicks too: the announcement says the custom
		// range was drawn. Only the numbers are drawn again, so the focus
		// stays in the field where Enter was pressed.
		run(t, ctx, "Enter", press(browser.KeyEnter), waitTrue(`location.hash.includes('start=')`),
			waitTrue(`document.getElementById('status').textContent.startsWith('2 clicks, 1 unique visitor from ')`), totalIs("2"))
		f = browser.Focused(t, ctx)
		browser.CheckStop(t, "after the custom range", f)
		g.Expect(f.ID).To(Equal("range-end"), "the focus stays on the range's form: %s", f)
		g.Expect(f.Name).To(Equal("To (included)"))

		// The chart's numbers, behind their disclosure.
		browser.TabTo(t, ctx, "Show the numbers", 5)
		run(t, ctx, "Enter: show them", press(browser.KeyEnter), waitTrue(`document.querySelector('.chart-table').open`))
		g.Expect(browser.AXTree(t, ctx).Names("columnheader")).To(ContainElements("Period", "Clicks", "Visitors"))

		// The CSV of the countries: ArrowDown to it in the list, Enter.
		browser.TabTo(t, ctx, "CSV of", 5)
		run(t, ctx, "ArrowDown: Countries", press(browser.KeyArrowDown), waitTrue(`document.getElementById('csv-group').value === 'country'`))
		browser.TabTo(t, ctx, "Download CSV", 2)
		csv, name := browser.Download(t, ctx, "Enter: download", press(browser.KeyEnter))
		g.Expect(name).To(Equal("kbd-country.csv"))
		g.Expect(strings.Split(strings.TrimSpace(string(csv)), "\n")).To(Equal([]string{"key,clicks,visitors", "FR,2,1"}))
		run(t, ctx, "the download said", waitTrue(`document.getElementById('status').textContent === 'Downloaded kbd-country.csv.'`))

		// The workspace's analytics: from the header; the top links and
		// the idle links are links to their pages.
		browser.ShiftTabTo(t, ctx, "Analytics", 40)
		run(t, ctx, "Enter on Analytics", press(browser.KeyEnter), titleFocused("Workspace analytics"),
			chromedp.WaitVisible(chromedp.CSS(`[data-test=chart]`)))
		browser.Axe(t, ctx, "workspace-analytics")
		fitsWidth(t, ctx, "the workspace's analytics")
		g.Expect(tabOrder(t, ctx, 40)).To(HaveExactElements(
			"radio 7 days", "Date From", "Date To (included)", "button Show",
			"DisclosureTriangle Show the numbers",
			"link "+host+"/kbd",
			"combobox CSV of", "button Download CSV",
			"link "+link, // never clicked by the store's reckoning: idle
		), "the stops after the title")
	})
}

// linkWithClicks creates the link key on host in w and writes its clicks
// to the analytics store: 3 from Germany 49 hours ago, 2 from France 3
// hours ago (5 in 7 days, 2 in 24 hours and in yesterday-to-today). It
// returns the link's short URL.
func linkWithClicks(t *testing.T, w *workspace, host, key string) string {
	t.Helper()
	l := w.createLink(t, map[string]any{"domain": host, "key": key, "url": "https://example.com/" + key})
	id := l["id"].(string)
	now := time.Now().UTC().Truncate(time.Minute)
	ref := analytics.LinkRef{UID: id, Namespace: w.ns, Name: key, Domain: host, Key: key}
	NewWithT(t).Expect(analyticsStore.Write(context.Background(), analytics.Batch{ID: key + "-" + w.ns, Events: []analytics.Event{
		{Time: now.Add(-49 * time.Hour), Link: ref, Visitor: 1, Device: analytics.DeviceDesktop, Country: "DE", Clicks: 3},
		{Time: now.Add(-3 * time.Hour), Link: ref, Visitor: 2, Device: analytics.DeviceMobile, Country: "FR", Clicks: 2},
	}})).To(Succeed())
	return l["link"].(string)
}
