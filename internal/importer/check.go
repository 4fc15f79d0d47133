package importer

import (
	"fmt"
	"strings"

	"github.com/kurz-dev/kurz/internal/validation"
)

// check normalizes every link and checks it with the API's own validators
// (internal/validation, built from the CRD's rules), so manifests apply and
// bulk items are accepted unless the cluster disagrees (a domain not in the
// workspace, a key taken). A link is checked whole: every reason is named.
func check(links []Link, o Options) *Result {
	r := &Result{Dropped: map[Drop]int{}}
	first := map[string]string{} // domain/key -> where it was first seen
	for i := range links {
		l := &links[i]
		if l.skip != "" {
			r.Skipped = append(r.Skipped, Problem{At: l.At, Reason: l.skip})
			continue
		}
		reasons := append(l.problems, normalize(l, o)...)
		if len(reasons) == 0 {
			id := l.Domain + "/" + l.Key
			if at, dup := first[id]; dup {
				reasons = append(reasons, fmt.Sprintf("%s is already the link of %s", id, at))
			} else {
				first[id] = l.At
			}
		}
		if len(reasons) > 0 {
			r.Invalid = append(r.Invalid, Problem{At: l.At, Reason: strings.Join(reasons, "; ")})
			continue
		}
		for _, d := range l.Dropped {
			r.Dropped[d]++
		}
		r.Links = append(r.Links, *l)
	}
	return r
}

// normalize trims the fields, fills and maps the domain, deduplicates the
// tags, and returns what the API would refuse, by field. URL values are not
// quoted: they may carry tokens, and the report lands in CI logs.
func normalize(l *Link, o Options) []string {
	var reasons []string
	fail := func(field, value, msg string) {
		if value != "" {
			reasons = append(reasons, fmt.Sprintf("%s %q %s", field, value, msg))
		} else {
			reasons = append(reasons, field+" "+msg)
		}
	}
	for _, p := range []*string{&l.Domain, &l.Key, &l.URL, &l.IOS, &l.Android, &l.ExpiredRedirectURL,
		&l.UTMSource, &l.UTMMedium, &l.UTMCampaign, &l.UTMTerm, &l.UTMContent, &l.UTMName} {
		*p = strings.TrimSpace(*p)
	}

	l.Domain = validation.NormalizeHostname(l.Domain)
	if l.Domain == "" {
		l.Domain = validation.NormalizeHostname(o.Domain)
	}
	if to, ok := o.DomainMap[l.Domain]; ok {
		l.Domain = validation.NormalizeHostname(to)
	}
	if l.Domain == "" {
		reasons = append(reasons, "no domain: the source names none (pass --domain)")
	} else if msg := validation.Hostname(l.Domain); msg != "" {
		fail("domain", l.Domain, msg)
	}
	if msg := validation.Key(l.Key); msg != "" {
		fail("key", l.Key, msg)
	}
	if msg := validation.URL(l.URL); msg != "" {
		fail("url", "", msg)
	}
	for _, u := range []struct{ field, value string }{{"ios", l.IOS}, {"android", l.Android}, {"expired_redirect_url", l.ExpiredRedirectURL}} {
		if u.value == "" {
			continue
		}
		if msg := validation.URL(u.value); msg != "" {
			fail(u.field, "", msg)
		}
	}
	for _, u := range []struct{ field, value string }{{"utm_source", l.UTMSource}, {"utm_medium", l.UTMMedium},
		{"utm_campaign", l.UTMCampaign}, {"utm_term", l.UTMTerm}, {"utm_content", l.UTMContent}, {"utm_name", l.UTMName}} {
		if msg := validation.UTM(u.value); msg != "" {
			fail(u.field, "", msg)
		}
	}
	if l.ExternalID != nil {
		if msg := validation.ExternalID(*l.ExternalID); msg != "" {
			fail("external_id", "", msg)
		}
	}
	if l.Password != "" {
		if msg := validation.Password(l.Password); msg != "" {
			fail("password", "", msg) // never the value
		}
	}
	reasons = append(reasons, normalizeTags(l)...)
	return reasons
}

// normalizeTags trims the tags, drops empty ones and repeats (tags are a
// set), and checks what remains.
func normalizeTags(l *Link) []string {
	var reasons []string
	seen := map[string]bool{}
	tags := l.Tags[:0:0]
	for _, t := range l.Tags {
		t = strings.TrimSpace(t)
		if t == "" || seen[t] {
			continue
		}
		seen[t] = true
		tags = append(tags, t)
		if msg := validation.Tag(t); msg != "" {
			reasons = append(reasons, fmt.Sprintf("tag %q %s", t, msg))
		}
	}
	l.Tags = tags
	if len(tags) == 0 {
		l.Tags = nil
	}
	if msg := validation.Tags(tags); msg != "" {
		reasons = append(reasons, "tags "+msg)
	}
	return reasons
}
