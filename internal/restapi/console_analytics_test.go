package restapi

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kurzv1alpha1 "github.com/kurz-dev/kurz/api/v1alpha1"
	"github.com/kurz-dev/kurz/internal/analytics"
	"github.com/kurz-dev/kurz/internal/testenv"
	"github.com/kurz-dev/kurz/internal/testenv/browser"
)

// TestConsoleAnalyticsOff: on a server without an analytics store, the
// link's page shows its fields, its state and the API's 503 message in
// place of the charts; so does the workspace's analytics page.
func TestConsoleAnalyticsOff(t *testing.T) {
	testenv.Need(t)
	g := NewWithT(t)
	ctx := newBrowser(t, 1280) // first: it skips without Chromium
	w, host := newWorkspaceWithDomain(t)
	l := w.createLink(t, map[string]any{"domain": host, "key": "off", "url": "https://example.com/off", "tags": []string{"t1"}})
	setLinkStatus(t, w, l["id"].(string), func(st *kurzv1alpha1.LinkStatus) {
		st.Conditions = []metav1.Condition{{Type: kurzv1alpha1.ConditionReady, Status: metav1.ConditionFalse,
			Reason: kurzv1alpha1.ReasonKeyConflict, Message: "key off is held by link older", LastTransitionTime: metav1.Now()}}
	})
	want := w.viewer.do("GET", "/api/v1/links/"+l["id"].(string)+"/analytics", nil)
	g.Expect(want.status).To(Equal(503))
	signIn(t, ctx, w.viewer.token)

	var state, reason, advice, off, fields string
	var edits int
	run(t, ctx, "the link's page",
		chromedp.WaitVisible(chromedp.CSS(`tr[data-key=off] [data-test=view]`)),
		chromedp.Click(chromedp.CSS(`tr[data-key=off] [data-test=view]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-test=analytics-off]`)),
		into(chromedp.Text(chromedp.CSS(`[data-test=link-state] .state`)), &state),
		into(chromedp.Text(chromedp.CSS(`[data-test=state-reason]`)), &reason),
		into(chromedp.Text(chromedp.CSS(`[data-test=state-advice]`)), &advice),
		into(chromedp.Text(chromedp.CSS(`[data-test=analytics-off]`)), &off),
		into(chromedp.Text(chromedp.CSS(`[data-test=link-fields]`)), &fields),
		into(chromedp.Evaluate[int](`document.querySelectorAll('[data-test=edit]').length`), &edits),
	)
	g.Expect(edits).To(BeZero(), "a viewer's link page has no Edit")
	g.Expect(state).To(Equal("Key conflict"))
	g.Expect(reason).To(Equal("key off is held by link older"))
	g.Expect(advice).To(ContainSubstring("Change the key"))
	g.Expect(off).To(Equal(want.body["message"]))
	g.Expect(fields).To(ContainSubstring("https://example.com/off"))
	g.Expect(fields).To(ContainSubstring("t1"))
	look(t, ctx, "link-analytics-off")

	run(t, ctx, "the workspace's analytics",
		chromedp.Click(chromedp.CSS(`#nav a[href="#/analytics"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-test=analytics-off]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-test=idle-links] li[data-key=off]`)),
		into(chromedp.Text(chromedp.CSS(`[data-test=analytics-off]`)), &off),
	)
	g.Expect(off).To(Equal(want.body["message"]))
}

// TestConsoleAnalytics: with a real SQLite store holding a known batch,
// the link's page charts its clicks per day and lists its top values with
// the batch's counts, bots apart; the range switches to 24 hours; the CSV
// downloads; the workspace page shows the top links and the links without
// a click in 90 days.
func TestConsoleAnalytics(t *testing.T) {
	testenv.Need(t)
	g := NewWithT(t)
	ctx := newBrowser(t, 1280) // first: it skips without Chromium
	w, host := newWorkspaceWithDomain(t)
	a := w.createLink(t, map[string]any{"domain": host, "key": "hot", "url": "https://example.com/hot"})
	b := w.createLink(t, map[string]any{"domain": host, "key": "warm", "url": "https://example.com/warm"})
	w.createLink(t, map[string]any{"domain": host, "key": "cold", "url": "https://example.com/cold"})
	aID, bID := a["id"].(string), b["id"].(string)
	// hot and warm were clicked just now: not idle. cold never was.
	for _, id := range []string{aID, bID} {
		setLinkStatus(t, w, id, func(st *kurzv1alpha1.LinkStatus) {
			now := metav1.Now()
			st.LastClickTime = &now
		})
	}

	// hot: 3 desktop clicks from Berlin via news.example (campaign
	// spring) 49 hours ago, 2 mobile ones from France, direct, 3 hours
	// ago, and a bot; warm: one click. Two days, so two bars.
	now := time.Now().UTC().Truncate(time.Minute)
	ref := func(id, key string) analytics.LinkRef {
		return analytics.LinkRef{UID: id, Namespace: w.ns, Name: key, Domain: host, Key: key}
	}
	batch := analytics.Batch{ID: "console-" + w.ns, Events: []analytics.Event{
		{Time: now.Add(-49 * time.Hour), Link: ref(aID, "hot"), Visitor: 1, Device: analytics.DeviceDesktop, OS: "Windows", Browser: "Chrome",
			Country: "DE", City: "DE/Berlin", Referrer: "news.example", UTMSource: "newsletter", UTMMedium: "email", UTMCampaign: "spring", Clicks: 3},
		{Time: now.Add(-3 * time.Hour), Link: ref(aID, "hot"), Visitor: 2, Device: analytics.DeviceMobile, OS: "iOS", Browser: "Safari",
			Country: "FR", Clicks: 2},
		{Time: now.Add(-3 * time.Hour), Link: ref(aID, "hot"), Visitor: 3, Device: analytics.DeviceBot, Browser: "Googlebot", Clicks: 1},
		{Time: now.Add(-5 * time.Hour), Link: ref(bID, "warm"), Visitor: 4, Device: analytics.DeviceDesktop, OS: "Linux", Browser: "Firefox",
			Country: "DE", Clicks: 1},
	}}
	g.Expect(analyticsStore.Write(context.Background(), batch)).To(Succeed())

	signInAt(t, ctx, analyticsURL, w.viewer.token)
	var clicks, visitors, bots string
	var bars []int
	var countries, cities, devices, referrers, campaigns map[string]string
	lists := func(name string, dst *map[string]string) chromedp.Action[chromedp.Void] {
		return into(chromedp.Evaluate[map[string]string](`Object.fromEntries([...document.querySelectorAll('[data-test=bars-`+name+`] li')]
			.map(li => [li.querySelector('.bar-label').textContent, li.querySelector('.bar-count').textContent]))`), dst)
	}
	run(t, ctx, "the link's analytics, 7 days",
		chromedp.WaitVisible(chromedp.CSS(`tr[data-key=hot] [data-test=view]`)),
		chromedp.Click(chromedp.CSS(`tr[data-key=hot] [data-test=view]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-test=chart]`)),
		into(chromedp.Text(chromedp.CSS(`[data-test=total-clicks]`)), &clicks),
		into(chromedp.Text(chromedp.CSS(`[data-test=total-visitors]`)), &visitors),
		into(chromedp.Text(chromedp.CSS(`[data-test=total-bots]`)), &bots),
		into(chromedp.Evaluate[[]int](`[...document.querySelectorAll('[data-test=chart] rect.bar')].map(r => Number(r.dataset.clicks)).filter(n => n > 0).sort()`), &bars),
		lists("country", &countries), lists("city", &cities), lists("device", &devices), lists("referrer", &referrers), lists("utm_campaign", &campaigns),
	)
	g.Expect([]string{clicks, visitors, bots}).To(Equal([]string{"5", "2", "1"}))
	g.Expect(bars).To(Equal([]int{2, 3}), "a bar per day with clicks (empty days are bars of 0)")
	g.Expect(countries).To(Equal(map[string]string{"DE": "3", "FR": "2"}))
	g.Expect(cities).To(Equal(map[string]string{"DE/Berlin": "3", "Unknown": "2"}))
	g.Expect(devices).To(Equal(map[string]string{"desktop": "3", "mobile": "2"}), "the bot is apart")
	g.Expect(referrers).To(Equal(map[string]string{"news.example": "3", "Direct (no referrer)": "2"}))
	g.Expect(campaigns).To(Equal(map[string]string{"spring": "3", "Unknown": "2"}))
	look(t, ctx, "link-analytics")

	run(t, ctx, "24 hours",
		chromedp.Click(chromedp.CSS(`[data-test=range-24h]`)),
		waitTrue(`location.hash.endsWith('interval=24h')`),
		waitTrue(`document.querySelector('[data-test=total-clicks]')?.textContent === '2'`),
		waitTrue(`[...document.querySelectorAll('[data-test=chart] rect.bar')].filter(r => r.dataset.clicks !== '0').length === 1`),
		// The page was drawn again; the focus is back on the radio (arrow
		// keys keep moving through the ranges).
		waitTrue(`document.activeElement && document.activeElement.dataset.test === 'range-24h'`),
	)

	// A custom range: the one day 49 hours ago, in the browser's zone.
	day := `(() => { const d = new Date(Date.now() - 49 * 3600e3); return d.getFullYear() + '-' + String(d.getMonth() + 1).padStart(2, '0') + '-' + String(d.getDate()).padStart(2, '0') })()`
	run(t, ctx, "a custom range",
		chromedp.Click(chromedp.CSS(`[data-test=range-custom]`)),
		chromedp.Evaluate[chromedp.Void](`(() => { document.getElementById('range-start').value = `+day+`; document.getElementById('range-end').value = `+day+`; return true })()`),
		chromedp.Click(chromedp.CSS(`[data-test=range-apply]`)),
		waitTrue(`location.hash.includes('start=')`),
		waitTrue(`document.querySelector('[data-test=total-clicks]')?.textContent === '3'`),
		waitTrue(`document.querySelector('[data-test=range-custom]').checked`),
	)
	run(t, ctx, "back to 24 hours",
		chromedp.Click(chromedp.CSS(`[data-test=range-24h]`)),
		waitTrue(`location.hash.endsWith('interval=24h')`),
		waitTrue(`document.querySelector('[data-test=total-clicks]')?.textContent === '2'`),
	)

	// The CSV, fetched with the token and saved from a blob: URL.
	csv, _ := browser.Download(t, ctx, "download the CSV",
		chromedp.SetValue(chromedp.CSS(`#csv-group`), "country"),
		chromedp.Click(chromedp.CSS(`[data-test=csv-download]`)),
	)
	g.Expect(strings.Split(strings.TrimSpace(string(csv)), "\n")).To(Equal([]string{"key,clicks,visitors", "FR,2,1"}), "the 24 hours' countries")

	var top, idle map[string]string
	run(t, ctx, "the workspace's analytics",
		chromedp.Click(chromedp.CSS(`#nav a[href="#/analytics"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-test=chart]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-test=idle-links] li`)),
		into(chromedp.Text(chromedp.CSS(`[data-test=total-clicks]`)), &clicks),
		lists("link", &top),
		into(chromedp.Evaluate[map[string]string](`Object.fromEntries([...document.querySelectorAll('[data-test=idle-links] li')].map(li => [li.dataset.key, li.textContent]))`), &idle),
	)
	g.Expect(clicks).To(Equal("6"))
	g.Expect(top).To(Equal(map[string]string{host + "/hot": "5", host + "/warm": "1"}))
	g.Expect(idle).To(HaveLen(1))
	g.Expect(idle).To(HaveKeyWithValue("cold", ContainSubstring("never clicked")))
	look(t, ctx, "workspace-analytics")

	// At a phone's width the link's page still fits: nothing wider than
	// the screen.
	var overflow bool
	run(t, ctx, "the link's page on a phone",
		chromedp.EmulateViewport(360, 800),
		chromedp.Navigate(analyticsURL+"/console/#/links/"+aID+"/view"),
		chromedp.WaitVisible(chromedp.CSS(`[data-test=chart]`)),
		into(chromedp.Evaluate[bool](`document.documentElement.scrollWidth > window.innerWidth`), &overflow),
	)
	g.Expect(overflow).To(BeFalse(), "the page scrolls sideways at 360 px")
	look(t, ctx, "link-analytics-phone")
}

// setLinkStatus changes the status of w's link id, as the controllers
// would (this suite runs none).
func setLinkStatus(t *testing.T, w *workspace, id string, change func(*kurzv1alpha1.LinkStatus)) {
	t.Helper()
	g := NewWithT(t)
	ctx := context.Background()
	var list kurzv1alpha1.LinkList
	g.Expect(k8s.List(ctx, &list, client.InNamespace(w.ns))).To(Succeed())
	for i := range list.Items {
		l := &list.Items[i]
		if string(l.UID) != id {
			continue
		}
		orig := l.DeepCopy()
		change(&l.Status)
		g.Expect(k8s.Status().Patch(ctx, l, client.MergeFrom(orig))).To(Succeed())
		// The API answers from its cache: wait until it shows the change.
		g.Eventually(func() bool { return linkStatusSeen(w, id, l) }, "30s", "100ms").Should(BeTrue())
		return
	}
	t.Fatalf("no link %s in %s", id, w.ns)
}

// linkStatusSeen reports whether the API shows l's status.
func linkStatusSeen(w *workspace, id string, l *kurzv1alpha1.Link) bool {
	body := w.viewer.do("GET", "/api/v1/links/"+id, nil).body
	if l.Status.LastClickTime != nil && body["last_click"] == nil {
		return false
	}
	if len(l.Status.Conditions) > 0 && body["state"] == linkStatePending {
		return false
	}
	return true
}
