package pagination

import "strconv"

// Link is one entry of meta.links: Previous, a page number, a gap or Next.
type Link struct {
	URL    *string `json:"url"`
	Label  string  `json:"label"`
	Active bool    `json:"active"`
}

// Links are the envelope's first/last/prev/next page URLs.
type Links struct {
	First string  `json:"first"`
	Last  string  `json:"last"`
	Prev  *string `json:"prev"`
	Next  *string `json:"next"`
}

// Meta is the envelope's page metadata.
type Meta struct {
	CurrentPage int    `json:"current_page"`
	From        *int   `json:"from"`
	LastPage    int    `json:"last_page"`
	Links       []Link `json:"links"`
	Path        string `json:"path"`
	PerPage     int    `json:"per_page"`
	To          *int   `json:"to"`
	Total       int    `json:"total"`
}

// Envelope is one page of a list answer.
type Envelope[T any] struct {
	Data  []T   `json:"data"`
	Links Links `json:"links"`
	Meta  Meta  `json:"meta"`
}

const (
	labelPrevious = "&laquo; Previous"
	labelNext     = "Next &raquo;"
	labelGap      = "..."
	// onEachSide is Laravel's default window: 3 pages each side of the
	// current one.
	onEachSide = 3
)

// Build makes Laravel's length-aware paginator envelope for page (1-based,
// possibly past the end) of a list of total items whose page items are data.
// path is the absolute URL of the list endpoint without query.
func Build[T any](path string, page, total int, data []T) Envelope[T] {
	return BuildWithQuery(path, "", page, total, data)
}

// BuildWithQuery is Build for a list narrowed by query parameters: query
// (encoded, without page) goes into every page URL before page, as
// Laravel's withQueryString writes it, so "next" stays in the same result;
// meta.path stays the bare endpoint (the contract's "base URL").
func BuildWithQuery[T any](path, query string, page, total int, data []T) Envelope[T] {
	if page < 1 {
		page = 1
	}
	if total < 0 {
		total = 0
	}
	if data == nil {
		data = []T{} // the contract's data is an array, never null
	}
	last := lastPage(total)
	prefix := path + "?"
	if query != "" {
		prefix += query + "&"
	}
	url := func(n int) string { return prefix + "page=" + strconv.Itoa(n) }

	var prev, next *string
	if page > 1 {
		prev = ptr(url(page - 1))
	}
	if page < last {
		next = ptr(url(page + 1))
	}

	var from, to *int
	if len(data) > 0 {
		// As Laravel: from the page's position, to from the items present.
		f := Offset(page) + 1
		from, to = ptr(f), ptr(f+len(data)-1)
	}

	return Envelope[T]{
		Data: data,
		Links: Links{
			First: url(1),
			Last:  url(last),
			Prev:  prev,
			Next:  next,
		},
		Meta: Meta{
			CurrentPage: page,
			From:        from,
			LastPage:    last,
			Links:       metaLinks(url, page, last, prev, next),
			Path:        path,
			PerPage:     PerPage,
			To:          to,
			Total:       total,
		},
	}
}

func lastPage(total int) int {
	if total <= 0 {
		return 1
	}
	return (total + PerPage - 1) / PerPage
}

// metaLinks lays out Previous, the page window and Next.
func metaLinks(url func(int) string, current, last int, prev, next *string) []Link {
	out := make([]Link, 0, 2*onEachSide+2*2+2+2)
	out = append(out, Link{URL: prev, Label: labelPrevious})
	for _, n := range window(current, last) {
		if n == 0 {
			out = append(out, Link{Label: labelGap})
			continue
		}
		out = append(out, Link{URL: ptr(url(n)), Label: strconv.Itoa(n), Active: n == current})
	}
	return append(out, Link{URL: next, Label: labelNext})
}

// window returns the page numbers to show, 0 standing for a gap. It is
// Laravel's UrlWindow with onEachSide 3: all pages when there are fewer than
// 14; otherwise the first two and last two pages always, plus ten pages at
// the near end or seven around the current page.
func window(current, last int) []int {
	const (
		side = onEachSide + 4 // Laravel's $window
		gap  = 0
	)
	if last < 2*onEachSide+8 {
		return pageRange(nil, 1, last)
	}
	switch {
	case current <= side:
		out := pageRange(nil, 1, side+onEachSide)
		out = append(out, gap)
		return pageRange(out, last-1, last)
	case current > last-side:
		out := []int{1, 2, gap}
		return pageRange(out, last-(side+onEachSide-1), last)
	default:
		out := []int{1, 2, gap}
		out = pageRange(out, current-onEachSide, current+onEachSide)
		out = append(out, gap)
		return pageRange(out, last-1, last)
	}
}

func pageRange(out []int, from, to int) []int {
	for n := from; n <= to; n++ {
		out = append(out, n)
	}
	return out
}

func ptr[V any](v V) *V { return &v }
