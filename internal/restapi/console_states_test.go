package restapi

import (
	"context"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kurzv1alpha1 "github.com/kurz-dev/kurz/api/v1alpha1"
	"github.com/kurz-dev/kurz/internal/testenv"
	"github.com/kurz-dev/kurz/internal/testenv/browser"
)

// TestConsoleStatesAndSort: links in each state the controller gives
// (active, expired, key conflict, domain pending) are found by the list's
// State filter, ordered by its Sort, and each link's page says its state
// in words, the controller's reason and what to do about it. The Domains
// page says when kurz last checked a domain's DNS and where its HTTPS
// stands (state, certificate expiry, the controller's message).
func TestConsoleStatesAndSort(t *testing.T) {
	testenv.Need(t)
	g := NewWithT(t)
	ctx := newBrowser(t, 1280) // first: it skips without Chromium
	w, host := newWorkspaceWithDomain(t)
	type state struct{ key, filter, reason, message, label, advice string }
	states := []state{
		{"bravo", "active", kurzv1alpha1.ReasonActive, "", "Active", "serves its destination"},
		{"delta", "expired", kurzv1alpha1.ReasonExpired, "expired at 2026-01-01", "Expired", "Clear or move the expiry date"},
		{"alpha", "conflict", kurzv1alpha1.ReasonKeyConflict, "key alpha is held by link older", "Key conflict", "Change the key"},
		{"charlie", "no_domain", kurzv1alpha1.ReasonDomainNotFound, "no Domain serves this hostname", "Domain pending", "publish its DNS record"},
	}
	ids := map[string]string{}
	for _, s := range states {
		l := w.createLink(t, map[string]any{"domain": host, "key": s.key, "url": "https://example.com/" + s.key})
		ids[s.key] = l["id"].(string)
		setLinkStatus(t, w, ids[s.key], func(st *kurzv1alpha1.LinkStatus) {
			st.Conditions = []metav1.Condition{{Type: kurzv1alpha1.ConditionReady, Status: metav1.ConditionFalse,
				Reason: s.reason, Message: s.message, LastTransitionTime: metav1.Now()}}
		})
		// setLinkStatus waits for a message; an active link has none.
		g.Eventually(func() any { return w.viewer.do("GET", "/api/v1/links/"+ids[s.key], nil).body["state"] }, "30s", "100ms").
			Should(Equal(s.filter))
	}
	signIn(t, ctx, w.viewer.token)
	keys := `[...document.querySelectorAll('table[data-test=links] tbody tr')].map(r => r.dataset.key).join(',')`
	choose := func(id, value string) chromedp.Action[chromedp.Void] {
		return chromedp.Evaluate[chromedp.Void](`(() => { const s = document.getElementById('` + id + `'); s.value = '` + value + `'; s.dispatchEvent(new Event('change')); return true })()`)
	}

	// Sort: key A-Z, then Z-A, as the API orders them.
	run(t, ctx, "sort by key", waitTrue(rowCount(4)), choose("f-sort", "key"),
		waitTrue(`location.hash.includes('sort=key')`), waitTrue(keys+` === 'alpha,bravo,charlie,delta'`))
	run(t, ctx, "sort by key, descending", choose("f-sort", "-key"),
		waitTrue(`location.hash.includes('sort=-key')`), waitTrue(keys+` === 'delta,charlie,bravo,alpha'`))

	for _, s := range states {
		var label string
		run(t, ctx, "filter by state "+s.filter,
			chromedp.Navigate(baseURL+"/console/#/links"), waitTrue(rowCount(4)),
			choose("f-state", s.filter),
			waitTrue(`location.hash.includes('state=`+s.filter+`')`),
			waitTrue(keys+` === '`+s.key+`'`),
			into(chromedp.Text(chromedp.CSS(`tr[data-key=`+s.key+`] .state`)), &label),
		)
		g.Expect(label).To(Equal(s.label), "the row says the state in words")

		var pageLabel, advice string
		var reasons int
		run(t, ctx, "the page of the "+s.filter+" link",
			chromedp.Click(chromedp.CSS(`tr[data-key=`+s.key+`] [data-test=view]`)),
			chromedp.WaitVisible(chromedp.CSS(`[data-test=link-state]`)),
			waitTrue(`location.hash === '#/links/`+ids[s.key]+`/view'`),
			into(chromedp.Text(chromedp.CSS(`[data-test=link-state] .state`)), &pageLabel),
			into(chromedp.Text(chromedp.CSS(`[data-test=state-advice]`)), &advice),
			into(chromedp.Evaluate[int](`document.querySelectorAll('[data-test=state-reason]').length`), &reasons),
		)
		g.Expect(pageLabel).To(Equal(s.label))
		g.Expect(advice).To(ContainSubstring(s.advice), "what to do about it")
		if s.message == "" {
			g.Expect(reasons).To(BeZero(), "no reason shown where the controller gave none")
			continue
		}
		var reason string
		run(t, ctx, "the reason", into(chromedp.Text(chromedp.CSS(`[data-test=state-reason]`)), &reason))
		g.Expect(reason).To(Equal(s.message), "the controller's own words")
	}

	// A domain kurz checked and routes: when, and its certificate.
	checked := time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)
	notAfter := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)
	setDomainStatus(t, w, host, func(st *kurzv1alpha1.DomainStatus) {
		st.LastCheckTime = &metav1.Time{Time: checked}
		st.TLS = &kurzv1alpha1.DomainTLS{Ingress: "x", SecretName: "x-tls", NotAfter: &metav1.Time{Time: notAfter}}
		st.Conditions = []metav1.Condition{{Type: kurzv1alpha1.ConditionTLSReady, Status: metav1.ConditionFalse,
			Reason: kurzv1alpha1.ReasonCertificateInvalid, Message: "The certificate has expired", LastTransitionTime: metav1.Now()}}
	})
	card := `li[data-domain="` + host + `"]`
	var shown string
	var local map[string]string
	run(t, ctx, "the domain's checks",
		chromedp.Navigate(baseURL+"/console/#/domains"),
		waitTrue(`!!document.querySelector('`+card+`') && document.querySelector('`+card+`').textContent.includes('HTTPS:')`),
		into(chromedp.Text(chromedp.CSS(card)), &shown),
		into(chromedp.Evaluate[map[string]string](`({checked: new Date('`+checked.Format(time.RFC3339)+`').toLocaleString(),
			notAfter: new Date('`+notAfter.Format(time.RFC3339)+`').toLocaleString()})`), &local),
	)
	g.Expect(shown).To(ContainSubstring("DNS last checked "+local["checked"]+"."), "when kurz last looked, in the viewer's zone")
	g.Expect(shown).To(ContainSubstring("HTTPS: Certificate invalid, expires " + local["notAfter"] + " (The certificate has expired)."))
	browser.Axe(t, ctx, "domain-checked")
}

// setDomainStatus changes the status of w's domain host, as the
// controllers would (this suite runs none), and waits until the API shows
// it.
func setDomainStatus(t *testing.T, w *workspace, host string, change func(*kurzv1alpha1.DomainStatus)) {
	t.Helper()
	g := NewWithT(t)
	ctx := context.Background()
	var list kurzv1alpha1.DomainList
	g.Expect(k8s.List(ctx, &list, client.InNamespace(w.ns))).To(Succeed())
	for i := range list.Items {
		d := &list.Items[i]
		if string(d.Spec.Domain) != host {
			continue
		}
		orig := d.DeepCopy()
		change(&d.Status)
		g.Expect(k8s.Status().Patch(ctx, d, client.MergeFrom(orig))).To(Succeed())
		g.Eventually(func() bool {
			for _, item := range w.viewer.do("GET", "/api/v1/domains", nil).body["data"].([]any) {
				if v := item.(map[string]any); v["domain"] == host {
					return v["last_checked_at"] != nil || d.Status.LastCheckTime == nil
				}
			}
			return false
		}, "30s", "100ms").Should(BeTrue())
		return
	}
	t.Fatalf("no domain %s in %s", host, w.ns)
}
