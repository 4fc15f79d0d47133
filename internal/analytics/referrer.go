package analytics

import (
	"net/url"
	"strings"
	"unicode/utf8"
)

// ReferrerHost is the host of a Referer header's URL, lower case, without
// port, userinfo, a trailing dot or a leading "www." (so that www.example.com
// and example.com are one referrer), at most MaxReferrerLen bytes; "" when
// the header is empty or names no host (direct). The result may be a
// substring of ref: clone it if ref aliases a reused buffer.
func ReferrerHost(ref string) string {
	_, rest, ok := strings.Cut(ref, "://")
	if !ok {
		return ""
	}
	if i := strings.IndexAny(rest, "/?#\\"); i >= 0 {
		rest = rest[:i]
	}
	if i := strings.LastIndexByte(rest, '@'); i >= 0 {
		rest = rest[i+1:]
	}
	if strings.HasPrefix(rest, "[") { // an IPv6 literal keeps its brackets' content
		if i := strings.IndexByte(rest, ']'); i > 0 {
			rest = rest[1:i]
		}
	} else if i := strings.LastIndexByte(rest, ':'); i >= 0 {
		rest = rest[:i]
	}
	rest = strings.TrimSuffix(rest, ".")
	if hasUpper(rest) {
		rest = strings.ToLower(rest)
	}
	rest = strings.TrimPrefix(rest, "www.")
	return truncate(rest, MaxReferrerLen)
}

func hasUpper(s string) bool {
	for i := 0; i < len(s); i++ {
		if 'A' <= s[i] && s[i] <= 'Z' {
			return true
		}
	}
	return false
}

// truncate cuts s to at most n bytes at a UTF-8 boundary.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// UTM is the three utm_* values analytics keeps.
type UTM struct {
	Source, Medium, Campaign string
}

// UTMOfURL is the utm_source, utm_medium and utm_campaign of a URL's query
// (the link's destination with its spec.utm merged in, as the redirect
// builds it), the first of each; each at most MaxUTMLen bytes.
func UTMOfURL(u string) UTM {
	base, _, _ := strings.Cut(u, "#")
	_, q, ok := strings.Cut(base, "?")
	if !ok {
		return UTM{}
	}
	var out UTM
	var seen [3]bool
	utmPairs(q, func(i int, v string) {
		if !seen[i] {
			seen[i] = true
			*out.field(i) = v
		}
	})
	return out
}

// MergeUTM is the utm values of the URL a visitor was sent to: the
// redirect merges the visitor's query string into the link's destination
// pair by pair, the visitor's winning for a name both have (also when the
// visitor's value is empty). link is UTMOfURL of the destination.
func MergeUTM(visitorQuery string, link UTM) UTM {
	out := link
	var seen [3]bool
	utmPairs(visitorQuery, func(i int, v string) {
		if !seen[i] {
			seen[i] = true
			*out.field(i) = v
		}
	})
	return out
}

func (u *UTM) field(i int) *string {
	switch i {
	case 0:
		return &u.Source
	case 1:
		return &u.Medium
	default:
		return &u.Campaign
	}
}

var utmNames = [3]string{"utm_source", "utm_medium", "utm_campaign"}

// utmPairs calls f(i, value) for each pair of the raw query q whose decoded
// name is utmNames[i], in order, with the value decoded (raw when its escape
// is bad, as the destination would likely see it) and truncated.
func utmPairs(q string, f func(i int, v string)) {
	for q != "" {
		var pair string
		pair, q, _ = strings.Cut(q, "&")
		k, v, _ := strings.Cut(pair, "=")
		if !strings.HasPrefix(k, "utm") && !strings.HasPrefix(k, "%75") {
			continue // cheap skip of the common case
		}
		if d, err := url.QueryUnescape(k); err == nil {
			k = d
		}
		for i, n := range utmNames {
			if k == n {
				if d, err := url.QueryUnescape(v); err == nil {
					v = d
				}
				f(i, truncate(v, MaxUTMLen))
				break
			}
		}
	}
}
