package restapi

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"

	"github.com/kurz-dev/kurz/internal/testenv"

	. "github.com/onsi/gomega"
)

// TestPagination grows one workspace to 0, 1, 25, 26, 51 and 400 links
// through the API and checks the envelope of every page at each size.
func TestPagination(t *testing.T) {
	testenv.Need(t)
	w, host := newWorkspaceWithDomain(t)
	created := 0
	for _, n := range []int{0, 1, 25, 26, 51, 400} {
		createLinks(t, w, host, created, n)
		created = n
		t.Run(strconv.Itoa(n), func(t *testing.T) {
			w.viewer.t = t
			checkPages(t, w.viewer, n)
		})
	}
}

// createLinks creates links from..to-1 with a few concurrent clients.
func createLinks(t *testing.T, w *workspace, host string, from, to int) {
	t.Helper()
	var wg sync.WaitGroup
	next := make(chan int)
	for range 4 {
		wg.Go(func() {
			for i := range next {
				r := w.editor.do("POST", "/api/v1/links", map[string]any{"key": fmt.Sprintf("k%d", i), "domain": host, "url": "https://example.com/" + strconv.Itoa(i)})
				if r.status != http.StatusCreated {
					t.Errorf("create link %d: %s", i, r)
				}
			}
		})
	}
	for i := from; i < to; i++ {
		next <- i
	}
	close(next)
	wg.Wait()
}

func checkPages(t *testing.T, c *apiClient, total int) {
	g := NewWithT(t)
	path := baseURL + "/api/v1/links"
	pageURL := func(n int) string { return path + "?page=" + strconv.Itoa(n) }
	last := max(1, (total+24)/25)

	seen := map[string]bool{}
	prevCreated := "9999"
	for page := 1; page <= last+1; page++ {
		r := c.do("GET", "/api/v1/links?page="+strconv.Itoa(page), nil)
		g.Expect(r.status).To(Equal(http.StatusOK))
		meta := r.body["meta"].(map[string]any)
		links := r.body["links"].(map[string]any)
		data := r.body["data"].([]any)

		want := min(25, max(0, total-(page-1)*25))
		g.Expect(data).To(HaveLen(want), "page %d of %d", page, total)
		g.Expect(meta).To(HaveKeyWithValue("current_page", BeNumerically("==", page)))
		g.Expect(meta).To(HaveKeyWithValue("last_page", BeNumerically("==", last)))
		g.Expect(meta).To(HaveKeyWithValue("per_page", BeNumerically("==", 25)))
		g.Expect(meta).To(HaveKeyWithValue("total", BeNumerically("==", total)))
		g.Expect(meta).To(HaveKeyWithValue("path", path))
		if want == 0 {
			g.Expect(meta["from"]).To(BeNil())
			g.Expect(meta["to"]).To(BeNil())
		} else {
			g.Expect(meta).To(HaveKeyWithValue("from", BeNumerically("==", (page-1)*25+1)))
			g.Expect(meta).To(HaveKeyWithValue("to", BeNumerically("==", (page-1)*25+want)))
		}
		g.Expect(links).To(HaveKeyWithValue("first", pageURL(1)))
		g.Expect(links).To(HaveKeyWithValue("last", pageURL(last)))
		if page > 1 {
			g.Expect(links).To(HaveKeyWithValue("prev", pageURL(page-1)))
		} else {
			g.Expect(links["prev"]).To(BeNil())
		}
		if page < last {
			g.Expect(links).To(HaveKeyWithValue("next", pageURL(page+1)))
		} else {
			g.Expect(links["next"]).To(BeNil())
		}
		checkMetaLinks(g, meta["links"].([]any), page, last, links["prev"], links["next"], pageURL)

		// Newest first, every link exactly once.
		for _, item := range data {
			l := item.(map[string]any)
			id, createdAt := l["id"].(string), l["created_at"].(string)
			g.Expect(seen).NotTo(HaveKey(id))
			seen[id] = true
			g.Expect(createdAt <= prevCreated).To(BeTrue(), "newest first")
			prevCreated = createdAt
		}
	}
	g.Expect(seen).To(HaveLen(total))

	// A page that is not a positive integer is page 1.
	for _, p := range []string{"abc", "0", "-2", "1.5", ""} {
		r := c.do("GET", "/api/v1/links?page="+p, nil)
		g.Expect(r.body["meta"]).To(HaveKeyWithValue("current_page", BeNumerically("==", 1)), "page=%q", p)
	}
}

// checkMetaLinks checks meta.links against Laravel's window (docs/api.md,
// "Lists and pagination").
func checkMetaLinks(g Gomega, got []any, current, last int, prev, next any, pageURL func(int) string) {
	type entry struct {
		URL    any
		Label  string
		Active bool
	}
	want := []entry{{prev, "&laquo; Previous", false}}
	pages := func(from, to int) {
		for n := from; n <= to; n++ {
			want = append(want, entry{pageURL(n), strconv.Itoa(n), n == current})
		}
	}
	gap := func() { want = append(want, entry{nil, "...", false}) }
	switch {
	case last <= 13:
		pages(1, last)
	case current <= 7:
		pages(1, 10)
		gap()
		pages(last-1, last)
	case current > last-7:
		pages(1, 2)
		gap()
		pages(last-9, last)
	default:
		pages(1, 2)
		gap()
		pages(current-3, current+3)
		gap()
		pages(last-1, last)
	}
	want = append(want, entry{next, "Next &raquo;", false})
	var gotEntries []entry
	for _, e := range got {
		m := e.(map[string]any)
		gotEntries = append(gotEntries, entry{m["url"], m["label"].(string), m["active"].(bool)})
	}
	g.Expect(gotEntries).To(Equal(want), "meta.links of page %d of %d", current, last)
}

func TestListURL(t *testing.T) {
	g := NewWithT(t)
	r := httptest.NewRequest("GET", "http://api.internal:8080/api/v1/links?page=2", nil)
	g.Expect((&server{}).listURL(r, linksPath)).To(Equal("http://api.internal:8080/api/v1/links"))
	s := &server{opts: Options{PublicURL: "https://go.example.com/"}}
	g.Expect(s.listURL(r, linksPath)).To(Equal("https://go.example.com/api/v1/links"))
	g.Expect(checkPublicURL("https://go.example.com")).To(Succeed())
	g.Expect(checkPublicURL("go.example.com")).NotTo(Succeed())
	g.Expect(checkPublicURL("https://go.example.com/?a=b")).NotTo(Succeed())
}
