package restapi

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/kurz-dev/kurz/internal/testenv"

	. "github.com/onsi/gomega"
)

// TestTags lists the workspace's tags with their link counts, sorted and
// paged, and follows links as they change.
func TestTags(t *testing.T) {
	testenv.Need(t)
	g := NewWithT(t)
	w, host := newWorkspaceWithDomain(t)
	var many []string
	for i := range 30 {
		many = append(many, fmt.Sprintf("t%02d", i))
	}
	w.createLink(t, map[string]any{"key": "a", "domain": host, "url": "https://example.com/", "tags": many})
	w.createLink(t, map[string]any{"key": "b", "domain": host, "url": "https://example.com/", "tags": []string{"t05", "sale", "Sale"}})
	c := w.createLink(t, map[string]any{"key": "c", "domain": host, "url": "https://example.com/", "tags": []string{"t05", "sale"}})
	// Another workspace's tags count there, not here.
	other, otherHost := newWorkspaceWithDomain(t)
	other.createLink(t, map[string]any{"key": "a", "domain": otherHost, "url": "https://example.com/", "tags": []string{"sale", "elsewhere"}})

	tags := func(path string) (names []string, counts []int, total int) {
		r := w.viewer.do("GET", path, nil)
		g.Expect(r.status).To(Equal(http.StatusOK), "%s", r)
		for _, it := range r.body["data"].([]any) {
			m := it.(map[string]any)
			names = append(names, m["name"].(string))
			counts = append(counts, int(m["links_count"].(float64)))
		}
		return names, counts, int(r.body["meta"].(map[string]any)["total"].(float64))
	}
	names, counts, total := tags("/api/v1/tags?sort=count")
	g.Expect(total).To(Equal(32))
	g.Expect(names[:4]).To(Equal([]string{"t05", "sale", "Sale", "t00"}), "most links first, then names A to Z")
	g.Expect(counts[:4]).To(Equal([]int{3, 2, 1, 1}))
	names, _, _ = tags("/api/v1/tags")
	g.Expect(names).To(HaveLen(25))
	g.Expect(names[:3]).To(Equal([]string{"Sale", "sale", "t00"}), "names A to Z, byte order")
	names, _, _ = tags("/api/v1/tags?page=2")
	g.Expect(names).To(Equal([]string{"t23", "t24", "t25", "t26", "t27", "t28", "t29"}))
	names, _, _ = tags("/api/v1/tags?sort=-name&page=1")
	g.Expect(names[0]).To(Equal("t29"))
	names, counts, total = tags("/api/v1/tags?search=SALE&sort=-count")
	g.Expect(total).To(Equal(2))
	g.Expect(names).To(Equal([]string{"Sale", "sale"}), "fewest first, then Z to A")
	g.Expect(counts).To(Equal([]int{1, 2}))

	// A tag exists while a link carries it.
	r := w.editor.do("PUT", "/api/v1/links/"+c["id"].(string), map[string]any{"key": "c", "domain": host, "url": "https://example.com/", "tags": []string{"new"}})
	g.Expect(r.status).To(Equal(http.StatusOK), "%s", r)
	names, counts, _ = tags("/api/v1/tags?search=e&sort=count")
	g.Expect(names).To(Equal([]string{"Sale", "new", "sale"}))
	g.Expect(counts).To(Equal([]int{1, 1, 1}))
	r = w.viewer.do("GET", "/api/v1/tags?page=2&search=t0", nil)
	g.Expect(r.body["links"]).To(HaveKeyWithValue("first", baseURL+"/api/v1/tags?search=t0&page=1"))
}
