package restapi

import (
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// listParams reads a list's query parameters the way form reads a body:
// each parameter the list knows is checked and a bad value is a 422 naming
// it; unknown parameters are ignored, and an empty value counts as absent
// (as Laravel's ConvertEmptyStringsToNull has it). carried collects the
// known parameters given, which every page URL repeats so that "next"
// stays in the same result.
type listParams struct {
	q       url.Values
	errs    fieldErrors
	carried url.Values
}

func newListParams(q url.Values) *listParams {
	return &listParams{q: q, carried: url.Values{}}
}

func (p *listParams) fail(name, msg string) {
	if !p.errs.has(name) {
		p.errs.add(name, "The "+attribute(name)+" field "+msg+".")
	}
}

// values returns the non-empty values of name, trimmed, and carries them.
func (p *listParams) values(name string) []string {
	var out []string
	for _, v := range p.q[name] {
		if v = strings.TrimSpace(v); v != "" {
			out = append(out, v)
		}
	}
	if len(out) > 0 {
		p.carried[name] = slices.Clone(out) // as given: callers may normalize out
	}
	return out
}

// single returns the value of a parameter that takes one: "" when absent,
// a 422 when given more than once.
func (p *listParams) single(name string) string {
	vs := p.values(name)
	switch len(vs) {
	case 0:
		return ""
	case 1:
		return vs[0]
	}
	p.fail(name, "must be a single value")
	return ""
}

// text is a single value of at most max characters.
func (p *listParams) text(name string, max int) string {
	v := p.single(name)
	if utf8.RuneCountInString(v) > max {
		p.fail(name, "must not be greater than "+strconv.Itoa(max)+" characters")
		return ""
	}
	return v
}

// oneOf is a single value among allowed ("" when absent), as Laravel's
// "in" rule words a refusal.
func (p *listParams) oneOf(name string, allowed ...string) string {
	v := p.single(name)
	if v != "" && !slices.Contains(allowed, v) {
		p.errs.add(name, "The selected "+attribute(name)+" is invalid.")
		return ""
	}
	return v
}

// date is a single date-time: the formats expires_at takes, or unix
// seconds (what last_click answers).
func (p *listParams) date(name string) time.Time {
	v := p.single(name)
	if v == "" {
		return time.Time{}
	}
	if n, err := strconv.ParseInt(v, 10, 64); err == nil && n > 0 && n < 253402300800 {
		return time.Unix(n, 0).UTC()
	}
	t, ok := parseDate(v)
	if !ok {
		p.fail(name, "must be a valid date")
	}
	return t
}

// boolean is a single true/false (or 1/0), nil when absent.
func (p *listParams) boolean(name string) *bool {
	var b bool
	switch p.single(name) {
	case "":
		return nil
	case "true", "1":
		b = true
	case "false", "0":
		b = false
	default:
		p.fail(name, "must be true or false")
		return nil
	}
	return &b
}

// check runs validate on every value of a list parameter.
func (p *listParams) check(name string, vs []string, validate func(string) string) {
	for _, v := range vs {
		if msg := validate(v); msg != "" {
			p.fail(name, msg)
			return
		}
	}
}

// err is the 422 of every bad parameter, or nil.
func (p *listParams) err() error { return p.errs.err() }

// query is the carried parameters, encoded (sorted by name, repeated
// values in the order given), for page URLs.
func (p *listParams) query() string { return p.carried.Encode() }
