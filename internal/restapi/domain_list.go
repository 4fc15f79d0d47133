package restapi

import (
	"cmp"
	"math"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	kurzv1alpha1 "github.com/kurz-dev/kurz/api/v1alpha1"
	"github.com/kurz-dev/kurz/internal/pagination"
)

// domainSort is what GET /api/v1/domains sorts by: newest or latest first
// for times, A to Z for the hostname; '-' reverses.
type domainSort uint8

const (
	domainByCreated domainSort = iota
	domainByUpdated
	domainByName
)

var domainSorts = map[string]domainSort{
	"created_at": domainByCreated,
	"updated_at": domainByUpdated,
	"domain":     domainByName,
}

// domainList is the filters and sort of GET /api/v1/domains.
type domainList struct {
	search  string // folded to lower case, as hostnames are stored
	status  string // "pending", "active" or "" (any)
	by      domainSort
	reverse bool
}

func (q domainList) plain() bool { return q == domainList{} }

func parseDomainList(v url.Values) (domainList, *listParams, error) {
	p := newListParams(v)
	var q domainList
	q.search = strings.ToLower(p.text("search", searchMaxLength))
	q.status = p.oneOf("status", "pending", "active")
	q.by, q.reverse = parseSort(p, domainSorts)
	return q, p, p.err()
}

// listDomains answers GET /api/v1/domains. A workspace has few domains, so
// a filtered or sorted list is made from all of them per request; the
// plain list, newest first, comes from the list index.
func (s *server) listDomains(w http.ResponseWriter, r *http.Request, c *caller) error {
	q, p, err := parseDomainList(r.URL.Query())
	if err != nil {
		return err
	}
	wid, err := s.workspaceID(r.Context(), c)
	if err != nil {
		return err
	}
	page := pagination.ParsePage(r.URL.Query().Get("page"))
	offset := pagination.Offset(page)
	var views []domainView
	var total int
	if q.plain() {
		var items []*kurzv1alpha1.Domain
		items, total = s.domains.index.Page(c.workspace, offset, pagination.PerPage)
		for _, d := range items {
			views = append(views, newDomainView(d, wid))
		}
	} else {
		all, _ := s.domains.index.Page(c.workspace, 0, math.MaxInt)
		views = filterDomains(all, wid, q)
		total = len(views)
		views = views[min(offset, total):min(offset+pagination.PerPage, total)]
	}
	writeJSON(w, http.StatusOK, pagination.BuildWithQuery(s.listURL(r, domainsPath), p.query(), page, total, views))
	return nil
}

// filterDomains returns the views of the domains q keeps, in q's order
// (ties broken by id, in the same direction).
func filterDomains(all []*kurzv1alpha1.Domain, workspaceID string, q domainList) []domainView {
	type item struct {
		view             domainView
		created, updated time.Time
	}
	var kept []item
	for _, d := range all {
		v := newDomainView(d, workspaceID)
		if q.search != "" && !strings.Contains(v.Domain, q.search) || q.status != "" && v.Status != q.status {
			continue
		}
		updated := d.CreationTimestamp.Time
		if d.Status.UpdatedAt != nil {
			updated = d.Status.UpdatedAt.Time
		}
		kept = append(kept, item{view: v, created: domainCreatedAt(d), updated: updated})
	}
	asc := (q.by == domainByName) != q.reverse
	slices.SortFunc(kept, func(a, b item) int {
		var c int
		switch q.by {
		case domainByCreated:
			c = a.created.Compare(b.created)
		case domainByUpdated:
			c = a.updated.Compare(b.updated)
		case domainByName:
			c = strings.Compare(a.view.Domain, b.view.Domain)
		}
		if c == 0 {
			c = cmp.Compare(a.view.ID, b.view.ID)
		}
		if !asc {
			c = -c
		}
		return c
	})
	views := make([]domainView, len(kept))
	for i, it := range kept {
		views[i] = it.view
	}
	return views
}
