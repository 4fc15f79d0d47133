package e2e

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"testing"

	. "github.com/onsi/gomega"
)

// noRedirects is a client that shows redirects instead of following them.
var noRedirects = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

// request builds an API request with the token and JSON headers of the contract.
func (k *kurzDev) request(t testing.TB, method, path string, body any) *http.Request {
	t.Helper()
	var r io.Reader
	if body != nil {
		data, err := json.Marshal(body)
		if err != nil {
			t.Fatal(err)
		}
		r = bytes.NewReader(data)
	}
	req, err := http.NewRequest(method, "http://"+k.apiAddr+path, r)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+k.token(t))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	return req
}

// call sends an API request and decodes the JSON answer into a map.
func (k *kurzDev) call(t testing.TB, method, path string, body any) (int, map[string]any) {
	t.Helper()
	resp, err := http.DefaultClient.Do(k.request(t, method, path, body))
	NewWithT(t).Expect(err).NotTo(HaveOccurred())
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	var out map[string]any
	NewWithT(t).Expect(json.Unmarshal(data, &out)).To(Succeed(), "%s %s answered %d with %q", method, path, resp.StatusCode, data)
	return resp.StatusCode, out
}

// must is call that expects a given status.
func (k *kurzDev) must(t testing.TB, want int, method, path string, body any) map[string]any {
	t.Helper()
	code, out := k.call(t, method, path, body)
	NewWithT(t).Expect(code).To(Equal(want), "%s %s: %v", method, path, out)
	return out
}

// redirect asks the redirect server for key on host, as a browser would.
func (k *kurzDev) redirect(t testing.TB, host, key string) *http.Response {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, "http://"+k.redirectAddr+"/"+key, nil)
	NewWithT(t).Expect(err).NotTo(HaveOccurred())
	req.Host = host
	resp, err := noRedirects.Do(req)
	NewWithT(t).Expect(err).NotTo(HaveOccurred())
	_, _ = io.Copy(io.Discard, resp.Body) // drained so the connection is reused; only the status and headers matter
	resp.Body.Close()
	return resp
}

// linkByKey finds a link through the API list, walking every page.
func (k *kurzDev) linkByKey(t testing.TB, domain, key string) map[string]any {
	t.Helper()
	for page := 1; ; page++ {
		out := k.must(t, http.StatusOK, http.MethodGet, "/api/v1/links?page="+itoa(page), nil)
		for _, item := range out["data"].([]any) {
			l := item.(map[string]any)
			if l["domain"] == domain && l["key"] == key {
				return l
			}
		}
		if out["links"].(map[string]any)["next"] == nil {
			return nil
		}
	}
}

func itoa(i int) string { b, _ := json.Marshal(i); return string(b) }
