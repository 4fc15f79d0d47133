package linkquery

import (
	"encoding/binary"
	"slices"
	"time"

	kurzv1alpha1 "github.com/kurz-dev/kurz/api/v1alpha1"
)

// Field is what a list is sorted by.
type Field uint8

// The sort fields. Each has a natural direction: newest, latest or most
// first for times and counts, A to Z (byte order) for keys.
const (
	ByCreated Field = iota
	ByUpdated
	ByKey
	ByClicks
	ByLastClick
)

// Sort is a field and whether its natural direction is reversed. The zero
// Sort is the default order: newest first.
type Sort struct {
	By      Field
	Reverse bool
}

// ascending reports whether the sort's values come smallest first.
func (s Sort) ascending() bool { return (s.By == ByKey) != s.Reverse }

// Query is a list's filters, all optional and combined with AND, and its
// sort. The zero Query lists every link, newest first.
type Query struct {
	// Search matches links whose key, URL or domain contains it, ASCII
	// letters compared without regard to case. Empty: no search.
	Search string
	// Domains keeps links on any of these hostnames.
	Domains []string
	// Tags keeps links with any of these tags (all of them with AllTags).
	Tags    []string
	AllTags bool
	// ExcludeTags drops links with any of these tags.
	ExcludeTags []string
	// States keeps links in any of these states.
	States []State
	// CreatedAfter and CreatedBefore keep links created strictly after or
	// before; LastClickBefore keeps links last clicked strictly before, or
	// never. Zero times are unset.
	CreatedAfter, CreatedBefore, LastClickBefore time.Time
	// HasPassword, when set, keeps links with (true) or without a password.
	HasPassword *bool
	Sort        Sort
}

// Filtered reports whether q narrows the list.
func (q *Query) Filtered() bool {
	return q.Search != "" || len(q.Domains) > 0 || len(q.Tags) > 0 || len(q.ExcludeTags) > 0 || len(q.States) > 0 ||
		!q.CreatedAfter.IsZero() || !q.CreatedBefore.IsZero() || !q.LastClickBefore.IsZero() || q.HasPassword != nil
}

// matcher is a Query compiled against one namespace's ids.
type matcher struct {
	none bool // nothing can match
	all  bool // no filter: everything matches

	domainIDs   []uint16 // wanted domains with an id in records
	domainNames []string // wanted domains records do not hold an id for
	byDomain    bool

	search       string // folded
	searchDomain []bool // by domain id: the hostname contains search

	anyTags, allTags, noTags []uint32

	states                  uint8 // bit per State; 0: any
	after, before           int64 // unix µs, exclusive
	hasAfter, hasBefore     bool
	clickedBefore           int64 // unix µs; links last clicked before, or never
	hasClickedBefore        bool
	password, checkPassword bool
}

// compile resolves q's names to sp's ids.
func compile(sp *space, q *Query) *matcher {
	m := &matcher{all: !q.Filtered()}
	if len(q.Domains) > 0 {
		m.byDomain = true
		for _, d := range q.Domains {
			switch id, ok := sp.domains.lookup(d); {
			case !ok:
			case id <= maxDomainID:
				m.domainIDs = append(m.domainIDs, uint16(id))
			default:
				m.domainNames = append(m.domainNames, d)
			}
		}
		m.none = m.none || len(m.domainIDs)+len(m.domainNames) == 0
	}
	if len(q.Tags) > 0 {
		for _, t := range q.Tags {
			id, ok := sp.tags.lookup(t)
			switch {
			case ok && q.AllTags:
				m.allTags = append(m.allTags, id)
			case ok:
				m.anyTags = append(m.anyTags, id)
			case q.AllTags:
				m.none = true // no link has this tag
			}
		}
		m.none = m.none || len(m.anyTags)+len(m.allTags) == 0
	}
	for _, t := range q.ExcludeTags {
		if id, ok := sp.tags.lookup(t); ok {
			m.noTags = append(m.noTags, id)
		}
	}
	for _, s := range q.States {
		m.states |= 1 << s
	}
	if q.Search != "" {
		m.search = foldASCII(q.Search)
		m.searchDomain = make([]bool, len(sp.domains.names))
		for id, name := range sp.domains.names {
			m.searchDomain[id] = name != "" && containsFold(name, m.search)
		}
	}
	if !q.CreatedAfter.IsZero() {
		m.after, m.hasAfter = q.CreatedAfter.UnixMicro(), true
	}
	if !q.CreatedBefore.IsZero() {
		m.before, m.hasBefore = q.CreatedBefore.UnixMicro(), true
	}
	if !q.LastClickBefore.IsZero() {
		m.clickedBefore, m.hasClickedBefore = q.LastClickBefore.UnixMicro(), true
	}
	if q.HasPassword != nil {
		m.password, m.checkPassword = *q.HasPassword, true
	}
	return m
}

// match reports whether r passes every filter: the fields of the record
// first, the Link's strings (search) last.
func (m *matcher) match(r *record) bool {
	if m.states != 0 && m.states&(1<<r.state) == 0 {
		return false
	}
	if m.checkPassword && (r.flags&hasPassword != 0) != m.password {
		return false
	}
	if m.hasAfter && r.created <= m.after || m.hasBefore && r.created >= m.before {
		return false
	}
	if m.hasClickedBefore && r.lastClick != 0 && int64(r.lastClick)*1e6 >= m.clickedBefore {
		return false
	}
	if m.byDomain && !m.domainMatches(r) {
		return false
	}
	if !m.tagsMatch(r.tags) {
		return false
	}
	return m.search == "" || m.searchMatches(r)
}

func (m *matcher) domainMatches(r *record) bool {
	if r.domain != 0 {
		return slices.Contains(m.domainIDs, r.domain)
	}
	return slices.Contains(m.domainNames, string(r.obj.Spec.Domain))
}

func (m *matcher) tagsMatch(s *tagSet) bool {
	if len(m.anyTags) > 0 {
		found := false
		for _, id := range m.anyTags {
			if s.has(id) {
				found = true
				break
			}
		}
		if !found {
			return false
		}
	}
	for _, id := range m.allTags {
		if !s.has(id) {
			return false
		}
	}
	for _, id := range m.noTags {
		if s.has(id) {
			return false
		}
	}
	return true
}

// searchMatches looks for the search in the hostname (by its id), the key
// and the URL. A key of at most 8 bytes is read from the record's prefix,
// already in cache, so a search costs one cache miss a link (its URL).
func (m *matcher) searchMatches(r *record) bool {
	if r.domain != 0 {
		if m.searchDomain[r.domain] {
			return true
		}
	} else if containsFold(string(r.obj.Spec.Domain), m.search) {
		return true
	}
	if r.flags&longKey == 0 {
		var b [8]byte
		binary.BigEndian.PutUint64(b[:], r.keyPfx)
		if containsFold(string(b[:len(r.key)]), m.search) {
			return true
		}
	} else if containsFold(r.key, m.search) {
		return true
	}
	return containsFold(r.url, m.search)
}

// Query returns up to limit links of namespace that match q, from position
// offset (0-based) of q's order, and how many match in all. An offset past
// the end gives no links.
func (ix *Index) Query(namespace string, q Query, offset, limit int) (links []*kurzv1alpha1.Link, total int) {
	sp := ix.space(namespace)
	if sp == nil {
		return []*kurzv1alpha1.Link{}, 0
	}
	sp.mu.RLock()
	defer sp.mu.RUnlock()
	m := compile(sp, &q)
	if m.none {
		return []*kurzv1alpha1.Link{}, 0
	}
	var slots []int32
	if sets, ok := ix.tagged(sp, m); ok {
		slots, total = ix.pageOf(sp.recs, sets, m, q.Sort, max(offset, 0), limit)
	} else {
		slots, total = ix.page(sp.recs, m, q.Sort, max(offset, 0), limit)
	}
	links = make([]*kurzv1alpha1.Link, len(slots))
	for i, slot := range slots {
		links[i] = sp.recs[slot].obj
	}
	return links, total
}
