package importer

import (
	"fmt"
	"strconv"
	"strings"
)

// kurz's own CSV: a header row naming the columns with the API's field
// names (docs/import.md), in any order. key and url are required, domain
// too unless --domain is given; every other column is optional:
//
//	domain,key,url,tags,password,expires_at,utm_source,utm_medium,
//	utm_campaign,utm_term,utm_content,utm_name,ios,android,external_id,
//	expired_redirect_url
//
// tags are separated by '|' (a comma would need quoting in every row, and
// Shlink's export uses '|' too). password is plaintext (hashed at import,
// as the API does); expires_at is RFC 3339 (a time without a zone is UTC).
// An empty cell is an unset field. An unknown column is an error: a typo
// (utm_sorce) must not lose a field silently.

// kurzColumns are the columns of kurz's CSV, with where each one goes.
var kurzColumns = map[string]func(l *Link, v string){
	"domain":               func(l *Link, v string) { l.Domain = v },
	"key":                  func(l *Link, v string) { l.Key = v },
	"url":                  func(l *Link, v string) { l.URL = v },
	"ios":                  func(l *Link, v string) { l.IOS = v },
	"android":              func(l *Link, v string) { l.Android = v },
	"utm_source":           func(l *Link, v string) { l.UTMSource = v },
	"utm_medium":           func(l *Link, v string) { l.UTMMedium = v },
	"utm_campaign":         func(l *Link, v string) { l.UTMCampaign = v },
	"utm_term":             func(l *Link, v string) { l.UTMTerm = v },
	"utm_content":          func(l *Link, v string) { l.UTMContent = v },
	"utm_name":             func(l *Link, v string) { l.UTMName = v },
	"password":             func(l *Link, v string) { l.Password = v },
	"expired_redirect_url": func(l *Link, v string) { l.ExpiredRedirectURL = v },
	"tags":                 func(l *Link, v string) { l.Tags = splitTags(v, "|") },
	"external_id": func(l *Link, v string) {
		n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		if err != nil {
			l.problem("external_id %q is not an integer", v)
			return
		}
		l.ExternalID = &n
	},
	"expires_at": func(l *Link, v string) {
		t, err := parseTime(v)
		if err != nil {
			l.problem("expires_at: %v", err)
			return
		}
		l.ExpiresAt = t
	},
}

// kurzColumnOrder is the documented column order, for messages and for
// writing.
var kurzColumnOrder = []string{"domain", "key", "url", "tags", "password", "expires_at",
	"utm_source", "utm_medium", "utm_campaign", "utm_term", "utm_content", "utm_name",
	"ios", "android", "external_id", "expired_redirect_url"}

func parseKurzCSV(t *table) ([]Link, error) {
	seen := map[string]bool{}
	for _, h := range t.header {
		name := strings.ToLower(h)
		if _, ok := kurzColumns[name]; !ok {
			return nil, fmt.Errorf("unknown column %q (kurz's CSV has %s)", h, strings.Join(kurzColumnOrder, ", "))
		}
		if seen[name] {
			return nil, fmt.Errorf("column %q appears twice", h)
		}
		seen[name] = true
	}
	for _, required := range []string{"key", "url"} {
		if !seen[required] {
			return nil, fmt.Errorf("no %s column (kurz's CSV needs key and url, and domain unless --domain is given)", required)
		}
	}
	links := make([]Link, 0, len(t.rows))
	for i, row := range t.rows {
		l := Link{At: t.at(i)}
		for c, h := range t.header {
			if v := row[c]; strings.TrimSpace(v) != "" {
				kurzColumns[strings.ToLower(h)](&l, v)
			}
		}
		links = append(links, l)
	}
	return links, nil
}

// splitTags splits a tag list on sep; empty tags are dropped later.
func splitTags(v, sep string) []string {
	if strings.TrimSpace(v) == "" {
		return nil
	}
	return strings.Split(v, sep)
}
