package restapi

import (
	"io"
	"net/http"
	"testing"

	. "github.com/onsi/gomega"

	"github.com/kurz-dev/kurz/internal/console"
	"github.com/kurz-dev/kurz/internal/testenv"
)

// TestConsoleServed: the API listener serves the console at /console/
// without a token, with its CSP; /console redirects there; an API path with
// a trailing slash is still a JSON 404.
func TestConsoleServed(t *testing.T) {
	testenv.Need(t)
	g := NewWithT(t)
	resp, err := http.Get(baseURL + "/console/")
	g.Expect(err).NotTo(HaveOccurred())
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	g.Expect(resp.StatusCode).To(Equal(http.StatusOK))
	g.Expect(resp.Header.Get("Content-Security-Policy")).To(Equal(console.ContentSecurityPolicy))
	g.Expect(string(body)).To(ContainSubstring(`<script type="module" src="js/app.js">`))

	noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err = noFollow.Get(baseURL + "/console")
	g.Expect(err).NotTo(HaveOccurred())
	resp.Body.Close()
	g.Expect(resp.StatusCode).To(Equal(http.StatusMovedPermanently))
	g.Expect(resp.Header.Get("Location")).To(Equal("/console/"))

	resp, err = http.Get(baseURL + "/api/v1/links/")
	g.Expect(err).NotTo(HaveOccurred())
	resp.Body.Close()
	g.Expect(resp.StatusCode).To(Equal(http.StatusNotFound))
	g.Expect(resp.Header.Get("Content-Type")).To(HavePrefix("application/json"))
}
