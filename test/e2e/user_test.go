package e2e

import (
	"bytes"
	"fmt"
	"image/png"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
)

// TestHTTPClientSession is a client of the API from first domain to redirect.
func TestHTTPClientSession(t *testing.T) {
	g := NewWithT(t)
	k := devT(t)

	domain := k.must(t, http.StatusCreated, http.MethodPost, "/api/v1/domains", map[string]any{
		"domain": "http.e2e.example", "not_found_url": "https://example.com/missing",
	})
	g.Expect(domain["status"]).To(Equal("pending"))

	// 30 links: two pages of the list. Each redirects the moment its
	// create is answered (all but the first, whose clicks are counted
	// below): the answer waits for the redirect server's index too.
	var first, last map[string]any
	for i := range 30 {
		l := k.must(t, http.StatusCreated, http.MethodPost, "/api/v1/links", map[string]any{
			"domain": "http.e2e.example", "key": fmt.Sprintf("k%02d", i), "url": fmt.Sprintf("https://example.com/page/%d", i),
			"utm_source": "e2e", "tags": []string{"e2e"},
		})
		g.Expect(l["link"]).To(Equal(fmt.Sprintf("https://http.e2e.example/k%02d", i)))
		if i == 0 {
			first = l
			continue
		}
		last = l
		g.Expect(k.redirect(t, "http.e2e.example", fmt.Sprintf("k%02d", i)).Header.Get("Location")).
			To(Equal(fmt.Sprintf("https://example.com/page/%d?utm_source=e2e", i)), "served as soon as created")
	}
	page1 := k.must(t, http.StatusOK, http.MethodGet, "/api/v1/links", nil)
	meta := page1["meta"].(map[string]any)
	g.Expect(meta["total"]).To(BeNumerically(">=", 30))
	g.Expect(meta["per_page"]).To(BeNumerically("==", 25))
	g.Expect(page1["data"]).To(HaveLen(25))
	g.Expect(page1["data"].([]any)[0].(map[string]any)["key"]).To(Equal("k29"), "newest first")
	page2 := k.must(t, http.StatusOK, http.MethodGet, "/api/v1/links?page=2", nil)
	g.Expect(page2["meta"].(map[string]any)["current_page"]).To(BeNumerically("==", 2))
	g.Expect(page2["links"].(map[string]any)["prev"]).To(HaveSuffix("/api/v1/links?page=1"))

	// A QR code of the first link is a PNG.
	resp, err := http.DefaultClient.Do(k.request(t, http.MethodPut, "/api/v1/links/"+first["id"].(string)+"/qr-code?download=true", nil))
	g.Expect(err).NotTo(HaveOccurred())
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	g.Expect(resp.StatusCode).To(Equal(http.StatusOK))
	g.Expect(resp.Header.Get("Content-Disposition")).To(ContainSubstring(`filename="k00.png"`))
	_, err = png.Decode(bytes.NewReader(body))
	g.Expect(err).NotTo(HaveOccurred(), "the QR code is a PNG")

	// Following the short link lands on the destination, campaign added.
	r := k.redirect(t, "http.e2e.example", "k00")
	g.Expect(r.StatusCode).To(Equal(http.StatusFound))
	g.Expect(r.Header.Get("Location")).To(Equal("https://example.com/page/0?utm_source=e2e"))
	g.Expect(k.redirect(t, "http.e2e.example", "nope").Header.Get("Location")).To(Equal("https://example.com/missing"))

	// The click reaches the API after a flush.
	g.Eventually(func() any {
		_, l := k.call(t, http.MethodGet, "/api/v1/links/"+first["id"].(string), nil)
		return l["clicks"]
	}).WithTimeout(30 * time.Second).Should(BeNumerically("==", 1))

	// An update and a delete are served as soon as they are answered too.
	lastPath := "/api/v1/links/" + last["id"].(string)
	k.must(t, http.StatusOK, http.MethodPut, lastPath, map[string]any{
		"domain": "http.e2e.example", "key": "k29", "url": "https://example.com/moved", "utm_source": "e2e",
	})
	g.Expect(k.redirect(t, "http.e2e.example", "k29").Header.Get("Location")).To(Equal("https://example.com/moved?utm_source=e2e"))
	k.must(t, http.StatusOK, http.MethodDelete, lastPath, nil)
	g.Expect(k.redirect(t, "http.e2e.example", "k29").Header.Get("Location")).To(Equal("https://example.com/missing"))
}

// TestGitOpsAndAPIAgree applies YAML with kubectl and uses the API on the same
// objects: each door sees the other's edits.
func TestGitOpsAndAPIAgree(t *testing.T) {
	g := NewWithT(t)
	k := devT(t)

	out, err := k.kubectl(`
apiVersion: kurz.dev/v1alpha1
kind: Domain
metadata: {name: gitops}
spec: {domain: gitops.e2e.example}
---
apiVersion: kurz.dev/v1alpha1
kind: Link
metadata: {name: handbook}
spec: {domain: gitops.e2e.example, key: handbook, url: "https://example.com/handbook"}
`, "apply", "-f", "-")
	g.Expect(err).NotTo(HaveOccurred(), out)

	var link map[string]any
	g.Eventually(func() map[string]any {
		link = k.linkByKey(t, "gitops.e2e.example", "handbook")
		return link
	}).WithTimeout(30*time.Second).ShouldNot(BeNil(), "the applied link is in the API")
	g.Expect(link["url"]).To(Equal("https://example.com/handbook"))
	g.Eventually(func() string {
		return k.redirect(t, "gitops.e2e.example", "handbook").Header.Get("Location")
	}).WithTimeout(30 * time.Second).Should(Equal("https://example.com/handbook"))
	g.Eventually(func() string {
		out, _ := k.kubectl("", "get", "link", "handbook", "-o", "jsonpath={.status.conditions[?(@.type==\"Ready\")].status}")
		return out
	}).WithTimeout(30*time.Second).Should(Equal("True"), "the controller marks it Ready")

	// kubectl edit -> API and redirect.
	out, err = k.kubectl("", "patch", "link", "handbook", "--type=merge", "-p", `{"spec":{"url":"https://example.com/handbook/v2"}}`)
	g.Expect(err).NotTo(HaveOccurred(), out)
	g.Eventually(func() any {
		_, l := k.call(t, http.MethodGet, "/api/v1/links/"+link["id"].(string), nil)
		return l["url"]
	}).WithTimeout(30 * time.Second).Should(Equal("https://example.com/handbook/v2"))
	g.Eventually(func() string {
		return k.redirect(t, "gitops.e2e.example", "handbook").Header.Get("Location")
	}).WithTimeout(30 * time.Second).Should(Equal("https://example.com/handbook/v2"))

	// API edit -> kubectl.
	updated := k.must(t, http.StatusOK, http.MethodPut, "/api/v1/links/"+link["id"].(string), map[string]any{
		"domain": "gitops.e2e.example", "key": "handbook", "url": "https://example.com/handbook/v3",
	})
	g.Expect(updated["updated_at"]).NotTo(Equal(link["updated_at"]))
	g.Eventually(func() string {
		out, _ := k.kubectl("", "get", "link", "handbook", "-o", "jsonpath={.spec.url}")
		return out
	}).WithTimeout(30 * time.Second).Should(Equal("https://example.com/handbook/v3"))

	// kubectl get kurz lists both kinds with their columns.
	out, err = k.kubectl("", "get", "kurz")
	g.Expect(err).NotTo(HaveOccurred(), out)
	g.Expect(out).To(MatchRegexp(`link.kurz.dev/handbook\s+gitops.e2e.example\s+handbook\s+https://example.com/handbook/v3`))
	g.Expect(out).To(MatchRegexp(`domain.kurz.dev/gitops\s+gitops.e2e.example\s+Pending`))
}

// TestBadInputChangesNothing feeds bad input through both doors.
func TestBadInputChangesNothing(t *testing.T) {
	g := NewWithT(t)
	k := devT(t)
	k.must(t, http.StatusCreated, http.MethodPost, "/api/v1/domains", map[string]any{"domain": "bad.e2e.example"})
	before := k.must(t, http.StatusOK, http.MethodGet, "/api/v1/links", nil)["meta"].(map[string]any)["total"]
	kubectlBefore, _ := k.kubectl("", "get", "links", "-o", "name")

	for _, tc := range []struct {
		body  map[string]any
		field string
	}{
		{map[string]any{"domain": "bad.e2e.example", "key": "x", "url": "javascript:alert(1)"}, "url"},
		{map[string]any{"domain": "bad.e2e.example", "key": "has space", "url": "https://example.com/"}, "key"},
		{map[string]any{"domain": "bad.e2e.example", "key": "x", "url": "https://u:p@example.com/"}, "url"},
		{map[string]any{"domain": "unknown.e2e.example", "key": "x", "url": "https://example.com/"}, "domain"},
		{map[string]any{"domain": "bad.e2e.example", "key": "x"}, "url"},
	} {
		out := k.must(t, http.StatusUnprocessableEntity, http.MethodPost, "/api/v1/links", tc.body)
		g.Expect(out["errors"]).To(HaveKey(tc.field), "%v", tc.body)
		g.Expect(out["message"]).NotTo(BeEmpty())
	}
	code, out := k.call(t, http.MethodPost, "/api/v1/links", nil)
	g.Expect(code).To(Equal(http.StatusUnprocessableEntity), "an empty body has no required fields: %v", out)

	req := k.request(t, http.MethodPost, "/api/v1/links", nil)
	req.Body = io.NopCloser(strings.NewReader(`{"domain": "bad.e2e.example",`))
	resp, err := http.DefaultClient.Do(req)
	g.Expect(err).NotTo(HaveOccurred())
	resp.Body.Close()
	g.Expect(resp.StatusCode).To(Equal(http.StatusBadRequest))

	kout, err := k.kubectl(`
apiVersion: kurz.dev/v1alpha1
kind: Link
metadata: {name: evil}
spec: {domain: bad.e2e.example, key: evil, url: "data:text/html,<script>alert(1)</script>"}
`, "apply", "-f", "-")
	g.Expect(err).To(HaveOccurred())
	g.Expect(kout).To(ContainSubstring("spec.url"))

	g.Expect(k.must(t, http.StatusOK, http.MethodGet, "/api/v1/links", nil)["meta"].(map[string]any)["total"]).To(Equal(before))
	kubectlAfter, _ := k.kubectl("", "get", "links", "-o", "name")
	g.Expect(kubectlAfter).To(Equal(kubectlBefore))
}
