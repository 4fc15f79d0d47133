package restapi

import (
	"net/http"
	"testing"

	"github.com/kurz-dev/kurz/internal/testenv"

	. "github.com/onsi/gomega"
)

// TestWorkspacesAreIsolated: two workspaces never see or touch each
// other's objects, and learn nothing of them (404, not 403).
func TestWorkspacesAreIsolated(t *testing.T) {
	testenv.Need(t)
	g := NewWithT(t)
	a, b := newWorkspace(t), newWorkspace(t)
	hostA, hostB := uniqueHost(), uniqueHost()
	domainA := a.createDomain(t, hostA)
	domainB := b.createDomain(t, hostB)
	linkA := a.createLink(t, map[string]any{"key": "same", "domain": hostA, "url": "https://a.example"})
	linkB := b.createLink(t, map[string]any{"key": "same", "domain": hostB, "url": "https://b.example"})
	idA, idB := linkA["id"].(string), linkB["id"].(string)
	g.Expect(linkA["workspace_id"]).To(Equal(a.uid))
	g.Expect(linkB["workspace_id"]).To(Equal(b.uid))
	g.Expect(a.uid).NotTo(Equal(b.uid))

	ids := func(r response) []string {
		var out []string
		for _, item := range r.body["data"].([]any) {
			out = append(out, item.(map[string]any)["id"].(string))
		}
		return out
	}
	g.Expect(ids(a.editor.do("GET", "/api/v1/links", nil))).To(Equal([]string{idA}))
	g.Expect(ids(b.editor.do("GET", "/api/v1/links", nil))).To(Equal([]string{idB}))
	g.Expect(ids(a.editor.do("GET", "/api/v1/domains", nil))).To(Equal([]string{domainA}))
	g.Expect(ids(b.editor.do("GET", "/api/v1/domains", nil))).To(Equal([]string{domainB}))

	update := map[string]any{"key": "x", "domain": hostA, "url": "https://a.example"}
	for _, r := range []response{
		a.editor.do("GET", "/api/v1/links/"+idB, nil),
		a.editor.do("PUT", "/api/v1/links/"+idB, update),
		a.editor.do("DELETE", "/api/v1/links/"+idB, nil),
		a.editor.do("PUT", "/api/v1/links/"+idB+"/qr-code", nil),
		a.editor.do("PUT", "/api/v1/domains/"+domainB, map[string]any{"domain": hostB}),
		a.editor.do("DELETE", "/api/v1/domains/"+domainB, nil),
		a.viewer.do("GET", "/api/v1/links/"+idB, nil),
	} {
		g.Expect(r.status).To(Equal(http.StatusNotFound), "%s", r)
	}
	// b's objects are untouched.
	g.Expect(b.editor.do("GET", "/api/v1/links/"+idB, nil).body).To(Equal(linkB))
	g.Expect(ids(b.editor.do("GET", "/api/v1/domains", nil))).To(Equal([]string{domainB}))
}
