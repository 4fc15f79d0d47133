package restapi

import (
	"net/http"
	"slices"
	"strings"

	"github.com/kurz-dev/kurz/internal/pagination"
)

const tagsPath = "/api/v1/tags"

// tagView is one tag of the workspace and how many of its links carry it
// (Laravel's withCount names it links_count).
type tagView struct {
	Name       string `json:"name"`
	LinksCount int    `json:"links_count"`
}

// tagSort is what GET /api/v1/tags sorts by: names A to Z (byte order),
// or counts most first and then names A to Z; '-' reverses either order.
type tagSort uint8

const (
	tagByName tagSort = iota
	tagByCount
)

var tagSorts = map[string]tagSort{"name": tagByName, "count": tagByCount}

// GET /api/v1/tags: every tag of the workspace's links with its link count,
// from the linkquery index (a dictionary per workspace, no scan of links).
// Tags live in the links (spec.tags): a tag exists while a link has it.
func (s *server) listTags(w http.ResponseWriter, r *http.Request, c *caller) error {
	p := newListParams(r.URL.Query())
	search := strings.ToLower(p.text("search", searchMaxLength))
	by, reverse := parseSort(p, tagSorts)
	if err := p.err(); err != nil {
		return err
	}
	var views []tagView
	for _, t := range s.linkQuery.Tags(c.workspace) {
		if search == "" || strings.Contains(strings.ToLower(t.Name), search) {
			views = append(views, tagView{Name: t.Name, LinksCount: t.Links})
		}
	}
	slices.SortFunc(views, func(a, b tagView) int {
		c := 0
		if by == tagByCount {
			c = b.LinksCount - a.LinksCount
		}
		if c == 0 {
			c = strings.Compare(a.Name, b.Name)
		}
		if reverse {
			c = -c
		}
		return c
	})
	page := pagination.ParsePage(r.URL.Query().Get("page"))
	offset, total := pagination.Offset(page), len(views)
	data := views[min(offset, total):min(offset+pagination.PerPage, total)]
	writeJSON(w, http.StatusOK, pagination.BuildWithQuery(s.listURL(r, tagsPath), p.query(), page, total, data))
	return nil
}
