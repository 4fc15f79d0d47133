package e2e

import (
	"net/http"
	"syscall"
	"testing"
	"time"

	. "github.com/onsi/gomega"
)

// TestRestartKeepsEverything stops kurz dev cleanly and then brutally, and
// checks what a user would: objects, tokens and click counts survive.
func TestRestartKeepsEverything(t *testing.T) {
	g := NewWithT(t)
	k := devT(t)

	k.must(t, http.StatusCreated, http.MethodPost, "/api/v1/domains", map[string]any{"domain": "restart.e2e.example"})
	link := k.must(t, http.StatusCreated, http.MethodPost, "/api/v1/links", map[string]any{
		"domain": "restart.e2e.example", "key": "r", "url": "https://example.com/r",
	})
	id := link["id"].(string)
	clicks := func() float64 {
		_, l := k.call(t, http.MethodGet, "/api/v1/links/"+id, nil)
		c, _ := l["clicks"].(float64)
		return c
	}
	click := func(n int) {
		for range n {
			g.Expect(k.redirect(t, "restart.e2e.example", "r").StatusCode).To(Equal(http.StatusFound))
		}
	}
	// The API answered once its lists held the Link; the redirect index
	// learns of it from the same watch, a moment later (docs/api.md).
	g.Eventually(func() int { return k.redirect(t, "restart.e2e.example", "r").StatusCode }).
		WithTimeout(10 * time.Second).Should(Equal(http.StatusFound))
	click(2)
	g.Eventually(clicks).WithTimeout(30 * time.Second).Should(BeNumerically("==", 3))
	oldToken := k.token(t)

	// Ctrl-C: a clean stop leaves no process behind.
	g.Expect(k.stop(t, syscall.SIGTERM)).To(Succeed(), "kurz dev exits 0 on SIGTERM; log:\n%s", k.log)
	g.Eventually(func() []string { return processesUsing(k.dataDir) }).WithTimeout(30 * time.Second).Should(BeEmpty())

	dev = startKurzDev(t, k.dataDir, k.apiAddr, k.redirectAddr)
	k = dev
	req := k.request(t, http.MethodGet, "/api/v1/links/"+id, nil)
	req.Header.Set("Authorization", "Bearer "+oldToken)
	resp, err := http.DefaultClient.Do(req)
	g.Expect(err).NotTo(HaveOccurred())
	resp.Body.Close()
	g.Expect(resp.StatusCode).To(Equal(http.StatusOK), "the token of the first start still works")
	g.Expect(clicks()).To(BeNumerically("==", 3), "clicks survive a restart")
	g.Expect(k.linkByKey(t, "restart.e2e.example", "r")).NotTo(BeNil())
	// The list and find indexes were filled from the start's stream
	// (internal/initialevents): a search finds the Link too.
	found := k.must(t, http.StatusOK, http.MethodGet, "/api/v1/links?search=example.com/r", nil)["data"].([]any)
	g.Expect(found).To(ContainElement(HaveKeyWithValue("id", id)))

	// SIGKILL: kurz cannot flush, so at most the clicks of one flush interval
	// are lost; its control plane dies with it and the data is intact.
	click(5)
	g.Eventually(clicks).WithTimeout(30 * time.Second).Should(BeNumerically("==", 8))
	click(4)
	g.Expect(k.stop(t, syscall.SIGKILL)).To(HaveOccurred())
	g.Eventually(func() []string { return processesUsing(k.dataDir) }).WithTimeout(30 * time.Second).Should(BeEmpty())

	dev = startKurzDev(t, k.dataDir, k.apiAddr, k.redirectAddr)
	k = dev
	g.Expect(clicks()).To(And(BeNumerically(">=", 8), BeNumerically("<=", 12)))
	g.Expect(k.redirect(t, "restart.e2e.example", "r").Header.Get("Location")).To(Equal("https://example.com/r"))
}
