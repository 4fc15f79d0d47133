package restapi

import (
	"net/http"
	"net/url"
	"slices"
	"sync"

	kurzv1alpha1 "github.com/kurz-dev/kurz/api/v1alpha1"
	"github.com/kurz-dev/kurz/internal/linkquery"
	"github.com/kurz-dev/kurz/internal/pagination"
	"github.com/kurz-dev/kurz/internal/validation"
)

// searchMaxLength bounds search terms (of links, domains and tags).
const searchMaxLength = 255

// linkStates are the state parameter's values: the Link's Ready reasons
// (Active, Expired, KeyConflict, DomainNotFound).
var linkStates = map[string]linkquery.State{
	"active":    linkquery.StateActive,
	"expired":   linkquery.StateExpired,
	"conflict":  linkquery.StateConflict,
	"no_domain": linkquery.StateNoDomain,
}

// linkSorts are the sort parameter's values; each field's natural
// direction (newest, latest or most first; keys A to Z) is reversed by a
// leading '-'.
var linkSorts = map[string]linkquery.Field{
	"created_at": linkquery.ByCreated,
	"updated_at": linkquery.ByUpdated,
	"key":        linkquery.ByKey,
	"clicks":     linkquery.ByClicks,
	"last_click": linkquery.ByLastClick,
}

// parseLinkList reads the filters and sort of GET /api/v1/links.
func parseLinkList(q url.Values) (linkquery.Query, *listParams, error) {
	p := newListParams(q)
	var lq linkquery.Query
	lq.Search = p.text("search", searchMaxLength)
	domains := p.values("domain")
	for i, d := range domains {
		domains[i] = validation.NormalizeHostname(d)
	}
	p.check("domain", domains, validation.Hostname)
	lq.Domains = domains
	lq.Tags = p.values("tag")
	p.check("tag", lq.Tags, validation.Tag)
	lq.AllTags = p.oneOf("tag_mode", "any", "all") == "all"
	lq.ExcludeTags = p.values("exclude_tag")
	p.check("exclude_tag", lq.ExcludeTags, validation.Tag)
	for _, s := range p.values("state") {
		st, ok := linkStates[s]
		if !ok {
			p.errs.add("state", "The selected state is invalid.")
			break
		}
		lq.States = append(lq.States, st)
	}
	lq.CreatedAfter = p.date("created_after")
	lq.CreatedBefore = p.date("created_before")
	lq.LastClickBefore = p.date("last_click_before")
	lq.HasPassword = p.boolean("has_password")
	lq.Sort.By, lq.Sort.Reverse = parseSort(p, linkSorts)
	return lq, p, p.err()
}

// parseSort reads sort=[-]field among fields: by is the zero F (the
// default order) when absent, reverse reverses the field's natural
// direction.
func parseSort[F any](p *listParams, fields map[string]F) (by F, reverse bool) {
	v := p.single("sort")
	if v == "" {
		return by, false
	}
	name, reverse := v, false
	if v[0] == '-' {
		name, reverse = v[1:], true
	}
	f, ok := fields[name]
	if !ok {
		p.errs.add("sort", "The selected sort is invalid.")
		return by, false
	}
	return f, reverse
}

// listLinks answers GET /api/v1/links. With filters or a sort the page
// comes from the linkquery index (a scan of the workspace's records); the
// plain list, newest first, from the list index (O(log n) a page).
func (s *server) listLinks(w http.ResponseWriter, r *http.Request, c *caller) error {
	lq, p, err := parseLinkList(r.URL.Query())
	if err != nil {
		return err
	}
	wid, err := s.workspaceID(r.Context(), c)
	if err != nil {
		return err
	}
	page := pagination.ParsePage(r.URL.Query().Get("page"))
	offset := pagination.Offset(page)
	var items []*kurzv1alpha1.Link
	var total int
	if !lq.Filtered() && lq.Sort == (linkquery.Sort{}) {
		items, total = s.links.index.Page(c.workspace, offset, pagination.PerPage)
	} else {
		items, total = s.linkQuery.Query(c.workspace, lq, offset, pagination.PerPage)
	}
	vp := linkViews.Get().(*[]linkView)
	views := slices.Grow((*vp)[:0], len(items))[:len(items)]
	for i, l := range items {
		views[i] = newLinkView(l, wid)
	}
	writeJSON(w, http.StatusOK, pagination.BuildWithQuery(s.listURL(r, linksPath), p.query(), page, total, views))
	clear(views) // no strings of Links kept alive by the pool
	*vp = views[:0]
	linkViews.Put(vp)
	return nil
}

// linkViews holds a page's views between requests: 25 of about 320 bytes,
// the largest allocation of a list request (8 KB of 22), which the
// collector's marks pay for under load. The views are dead once writeJSON
// has encoded them.
var linkViews = sync.Pool{New: func() any { return new([]linkView) }}
