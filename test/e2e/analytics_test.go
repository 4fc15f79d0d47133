package e2e

import (
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	. "github.com/onsi/gomega"

	"github.com/kurz-dev/kurz/internal/testenv"
)

const (
	desktopUA = "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36"
	phoneUA   = "Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.0 Mobile/15E148 Safari/604.1"
	botUA     = "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)"
)

// visit follows key on host as a browser with ua, referer, a country
// header and a query string.
func (k *kurzDev) visit(t testing.TB, host, key, query, ua, referer, country string) {
	t.Helper()
	u := "http://" + k.redirectAddr + "/" + key
	if query != "" {
		u += "?" + query
	}
	req, err := http.NewRequest(http.MethodGet, u, nil)
	NewWithT(t).Expect(err).NotTo(HaveOccurred())
	req.Host = host
	req.Header.Set("User-Agent", ua)
	if referer != "" {
		req.Header.Set("Referer", referer)
	}
	if country != "" {
		req.Header.Set("CF-IPCountry", country)
	}
	resp, err := noRedirects.Do(req)
	NewWithT(t).Expect(err).NotTo(HaveOccurred())
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	NewWithT(t).Expect(resp.StatusCode).To(Equal(http.StatusFound))
}

// rows is an analytics answer as key -> clicks.
func (k *kurzDev) rows(t testing.TB, path string) map[string]float64 {
	t.Helper()
	out := k.must(t, http.StatusOK, http.MethodGet, path, nil)
	rows := map[string]float64{}
	for _, r := range out["data"].([]any) {
		m := r.(map[string]any)
		if c := m["clicks"].(float64); c > 0 {
			rows[m["key"].(string)] += c
		}
	}
	return rows
}

// TestAnalytics follows issue 27's end-to-end checks on a real kurz dev
// (analytics on by default, in its data dir): clicks from a desktop, a
// phone and a bot with referrers, UTM values and a country header; every
// group_by answers the right counts, bots excluded by default; CSV; every
// parameter's bad value answers 422 naming it; a foreign id 404; a restart
// keeps the data.
func TestAnalytics(t *testing.T) {
	g := NewWithT(t)
	dir, err := os.MkdirTemp("", "kurz-e2e-analytics-")
	g.Expect(err).NotTo(HaveOccurred())
	t.Cleanup(func() { os.RemoveAll(dir) })
	extra := []string{"--analytics-country-header", "CF-IPCountry"}
	k := startKurzDev(t, dir, testenv.FreeAddr(t), testenv.FreeAddr(t), extra...)
	t.Cleanup(func() { _ = k.stop(t, syscall.SIGTERM) })

	k.must(t, http.StatusCreated, http.MethodPost, "/api/v1/domains", map[string]any{"domain": "an.e2e.example"})
	spring := k.must(t, http.StatusCreated, http.MethodPost, "/api/v1/links", map[string]any{
		"domain": "an.e2e.example", "key": "spring", "url": "https://shop.example/sale", "utm_source": "newsletter", "tags": []string{"campaign"},
	})
	other := k.must(t, http.StatusCreated, http.MethodPost, "/api/v1/links", map[string]any{
		"domain": "an.e2e.example", "key": "other", "url": "https://shop.example/other",
	})
	id, otherID := spring["id"].(string), other["id"].(string)

	for range 3 {
		k.visit(t, "an.e2e.example", "spring", "utm_campaign=spring", desktopUA, "https://www.news.example/today", "DE")
	}
	for range 2 {
		k.visit(t, "an.e2e.example", "spring", "", phoneUA, "", "fr")
	}
	k.visit(t, "an.e2e.example", "spring", "", botUA, "", "")
	k.visit(t, "an.e2e.example", "other", "", desktopUA, "", "US")

	base := "/api/v1/links/" + id + "/analytics?interval=24h"
	g.Eventually(func() map[string]float64 { return k.rows(t, base+"&group_by=device&exclude_bots=false") }).
		WithTimeout(100*time.Second).WithPolling(time.Second).
		Should(Equal(map[string]float64{"desktop": 3, "mobile": 2, "bot": 1}), "log:\n%s", k.log)

	expectAnswers := func() {
		g.Expect(k.rows(t, base+"&group_by=device")).To(Equal(map[string]float64{"desktop": 3, "mobile": 2}), "bots are excluded by default")
		g.Expect(k.rows(t, base+"&group_by=browser")).To(Equal(map[string]float64{"Chrome": 3, "Safari": 2}))
		g.Expect(k.rows(t, base+"&group_by=os")).To(Equal(map[string]float64{"Windows": 3, "iOS": 2}))
		g.Expect(k.rows(t, base+"&group_by=referrer")).To(Equal(map[string]float64{"news.example": 3, "": 2}))
		g.Expect(k.rows(t, base+"&group_by=country")).To(Equal(map[string]float64{"DE": 3, "FR": 2}))
		g.Expect(k.rows(t, base+"&group_by=utm_source")).To(Equal(map[string]float64{"newsletter": 5}), "the link's utm_source")
		g.Expect(k.rows(t, base+"&group_by=utm_campaign")).To(Equal(map[string]float64{"spring": 3, "": 2}), "the visitor's utm_campaign, merged")
		g.Expect(k.rows(t, base+"&group_by=utm_medium")).To(Equal(map[string]float64{"": 5}))
		series := k.rows(t, base)
		total := 0.0
		for _, c := range series {
			total += c
		}
		g.Expect(total).To(Equal(5.0), "the time series sums to the human clicks")
		g.Expect(k.rows(t, "/api/v1/analytics?interval=24h&group_by=link")).To(Equal(map[string]float64{id: 5, otherID: 1}))
		g.Expect(k.rows(t, "/api/v1/analytics?interval=24h&group_by=link&tag=campaign")).To(Equal(map[string]float64{id: 5}))
		g.Expect(k.rows(t, "/api/v1/analytics?interval=24h&group_by=country&key=other&domain=an.e2e.example")).To(Equal(map[string]float64{"US": 1}))
		g.Expect(k.rows(t, "/api/v1/analytics?interval=24h&group_by=device&device=mobile")).To(Equal(map[string]float64{"mobile": 2}))
		out := k.must(t, http.StatusOK, http.MethodGet, base+"&group_by=device", nil)
		g.Expect(out).To(HaveKeyWithValue("source", "events"))
		g.Expect(out).To(HaveKeyWithValue("granularity", "hour"))
	}
	expectAnswers()
	// Visitors: each User-Agent from one address is one visitor.
	out := k.must(t, http.StatusOK, http.MethodGet, base+"&group_by=device", nil)
	for _, r := range out["data"].([]any) {
		g.Expect(r.(map[string]any)["visitors"]).To(BeNumerically("==", 1), "one desktop, one phone: %v", r)
	}

	// CSV.
	req := k.request(t, http.MethodGet, base+"&group_by=country", nil)
	req.Header.Set("Accept", "text/csv")
	resp, err := http.DefaultClient.Do(req)
	g.Expect(err).NotTo(HaveOccurred())
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	g.Expect(resp.Header.Get("Content-Type")).To(HavePrefix("text/csv"))
	g.Expect(strings.Split(strings.TrimSpace(string(body)), "\n")).To(ConsistOf("key,clicks,visitors", "DE,3,1", "FR,2,1"))

	// Every parameter's bad value: 422 naming it.
	for param, value := range map[string]string{
		"interval": "2w", "start": "yesterday", "granularity": "week", "timezone": "Mars/Olympus",
		"group_by": "planet", "exclude_bots": "maybe", "limit": "0", "device": "fridge", "bogus": "1",
	} {
		q := url.Values{param: {value}}
		if param == "limit" {
			q.Set("group_by", "device")
		}
		code, out := k.call(t, http.MethodGet, "/api/v1/links/"+id+"/analytics?"+q.Encode(), nil)
		g.Expect(code).To(Equal(http.StatusUnprocessableEntity), "%s=%s: %v", param, value, out)
		g.Expect(out["errors"]).To(HaveKey(param), "%s=%s: %v", param, value, out)
	}
	code, out := k.call(t, http.MethodGet, "/api/v1/analytics?domain=not..a..host", nil)
	g.Expect(code).To(Equal(http.StatusUnprocessableEntity))
	g.Expect(out["errors"]).To(HaveKey("domain"))
	code, _ = k.call(t, http.MethodGet, "/api/v1/links/"+id+"/analytics?tag=x", nil)
	g.Expect(code).To(Equal(http.StatusUnprocessableEntity), "link filters apply to the workspace only")

	// A foreign (or unknown) id.
	code, _ = k.call(t, http.MethodGet, "/api/v1/links/00000000-0000-4000-8000-000000000000/analytics", nil)
	g.Expect(code).To(Equal(http.StatusNotFound))

	// The Link's exact clicks count every redirect (the bot too).
	g.Eventually(func() float64 {
		_, l := k.call(t, http.MethodGet, "/api/v1/links/"+id, nil)
		c, _ := l["clicks"].(float64)
		return c
	}).WithTimeout(30 * time.Second).Should(BeNumerically("==", 6))

	// A restart keeps the data.
	g.Expect(k.stop(t, syscall.SIGTERM)).To(Succeed(), "log:\n%s", k.log)
	k = startKurzDev(t, dir, k.apiAddr, k.redirectAddr, extra...)
	expectAnswers()

	// The salt lives in a Secret of today's and tomorrow's salts, never
	// in the log.
	sec, err := k.kubectl("", "get", "secret", "-n", "default", "kurz-analytics-salt", "-o", "json")
	g.Expect(err).NotTo(HaveOccurred(), sec)
	var s struct{ Data map[string]string }
	g.Expect(json.Unmarshal([]byte(sec), &s)).To(Succeed())
	g.Expect(s.Data).To(HaveLen(2))
	g.Expect(s.Data).To(HaveKey(time.Now().UTC().Format(time.DateOnly)))
	for _, v := range s.Data {
		g.Expect(k.log.String()).NotTo(ContainSubstring(v))
	}
}
