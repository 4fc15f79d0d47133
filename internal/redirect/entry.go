package redirect

import (
	"net/url"
	"strings"

	"k8s.io/apimachinery/pkg/types"

	kurzv1alpha1 "github.com/kurz-dev/kurz/api/v1alpha1"
	"github.com/kurz-dev/kurz/internal/analytics"
	"github.com/kurz-dev/kurz/internal/cacheslim"
	"github.com/kurz-dev/kurz/internal/redirect/clicks"
)

// Entry is what the redirect handler needs of a Link, and nothing more: the
// index holds one per Link, never the object itself, to keep memory per link
// small. Entries are immutable once built; a change to the Link builds a new
// one (sharing its click Slot).
type Entry struct {
	// url is the link's URL as the cache holds it (shared, not copied)
	// and urlUTM what its utm_* parameters add ("?utm_source=x" or
	// "&utm_source=x"), interned, so links of one campaign share it; the
	// hot path writes the two one after the other. A URL with a fragment
	// has them merged into url instead, urlUTM empty.
	url, urlUTM string
	// expiresAt is in unix nanoseconds; 0 means never.
	expiresAt int64
	// entryRare holds the fields few links set; links that set none share
	// noRare, so an Entry is 64 bytes, not 120: in Go's 64-byte size class
	// each object is one cache line, which a redirect waits for once (at 80
	// bytes, every Entry spanned two). The Link's uid is its Slot's.
	*entryRare
	// rec is the index's record of the Link: its name for clicks and log
	// lines, its host and key for analytics.
	rec *linkRec
	// slot counts its clicks; every Entry of the Link's uid shares it.
	slot *clicks.Slot
}

// entryRare is the part of an Entry most links leave empty. ios and
// android have the utm_* parameters merged in (rare, so not worth the
// split of url).
type entryRare struct {
	ios, android, expiredURL, passwordHash string
}

// noRare is the entryRare of every link that sets none of its fields. It is
// never written.
var noRare = &entryRare{}

// newEntry builds the Entry of l, recorded in rec, sharing slot (the click
// Slot of the previous Entry of the same uid) when given, else with a new
// Slot of q.
func newEntry(l *kurzv1alpha1.Link, rec *linkRec, slot *clicks.Slot, q *clicks.Queue) *Entry {
	if slot == nil {
		slot = q.NewSlot(l.UID)
	}
	e := &Entry{rec: rec, slot: slot, entryRare: noRare}
	utm := utmPairs(l.Spec.UTM)
	e.url, e.urlUTM = splitUTM(string(l.Spec.URL), utm)
	var r entryRare
	if l.Spec.IOS != nil {
		r.ios = withUTM(string(*l.Spec.IOS), utm)
	}
	if l.Spec.Android != nil {
		r.android = withUTM(string(*l.Spec.Android), utm)
	}
	if l.Spec.ExpiresAt != nil {
		e.expiresAt = l.Spec.ExpiresAt.UnixNano()
	}
	if l.Spec.ExpiredRedirectURL != nil {
		r.expiredURL = string(*l.Spec.ExpiredRedirectURL)
	}
	if l.Spec.PasswordHash != nil {
		r.passwordHash = *l.Spec.PasswordHash
	}
	if r != (entryRare{}) {
		e.entryRare = &r
	}
	return e
}

// uid is the uid of the Link e serves.
func (e *Entry) uid() types.UID { return e.slot.UID() }

// ClickedLink is the Link e serves, as its clicks are counted
// (clicks.Linker).
func (e *Entry) ClickedLink() clicks.Link {
	return clicks.Link{UID: e.uid(), Namespace: e.rec.namespace, Name: e.rec.name}
}

// AnalyticsRef names the Link for click analytics (capture.Link).
func (e *Entry) AnalyticsRef() analytics.LinkRef {
	return analytics.LinkRef{UID: string(e.uid()), Namespace: e.rec.namespace, Name: e.rec.name, Domain: e.rec.host, Key: e.rec.key}
}

// expired reports whether the link has expired at now (unix nanoseconds).
func (e *Entry) expired(now int64) bool { return e.expiresAt != 0 && now >= e.expiresAt }

// destination picks the target for a user agent: ios for iPhone/iPad/iPod,
// android for Android, when set. The target is dest followed by utm.
func (e *Entry) destination(ua []byte) (dest, utm string) {
	if e.ios == "" && e.android == "" {
		return e.url, e.urlUTM
	}
	switch device(ua) {
	case deviceIOS:
		if e.ios != "" {
			return e.ios, ""
		}
	case deviceAndroid:
		if e.android != "" {
			return e.android, ""
		}
	}
	return e.url, e.urlUTM
}

type kv struct{ k, v string }

func utmPairs(u *kurzv1alpha1.LinkUTM) []kv {
	if u == nil {
		return nil
	}
	var out []kv
	for _, p := range []struct {
		k string
		v *string
	}{
		{"utm_source", u.Source}, {"utm_medium", u.Medium}, {"utm_campaign", u.Campaign},
		{"utm_term", u.Term}, {"utm_content", u.Content}, {"utm_name", u.Name},
	} {
		if p.v != nil && *p.v != "" {
			out = append(out, kv{p.k, *p.v})
		}
	}
	return out
}

// splitUTM returns dest and what withUTM appends to it, interned; for a
// dest with a fragment (the pairs go before it), withUTM's result and "".
func splitUTM(dest string, utm []kv) (base, add string) {
	if len(utm) == 0 {
		return dest, ""
	}
	if strings.Contains(dest, "#") {
		return withUTM(dest, utm), ""
	}
	pairs := utmToAdd(dest, utm)
	if pairs == "" {
		return dest, ""
	}
	switch {
	case !strings.Contains(dest, "?"):
		add = "?" + pairs
	case strings.HasSuffix(dest, "?") || strings.HasSuffix(dest, "&"):
		add = pairs
	default:
		add = "&" + pairs
	}
	return dest, cacheslim.Intern(add)
}

// withUTM appends each utm pair the destination's query does not carry yet.
// The destination's own query and fragment are kept byte for byte.
func withUTM(dest string, utm []kv) string {
	if len(utm) == 0 {
		return dest
	}
	base, frag, hasFrag := strings.Cut(dest, "#")
	out := appendQuery(base, utmToAdd(base, utm))
	if hasFrag {
		out += "#" + frag
	}
	return out
}

// utmToAdd is the raw query ("k=v&k=v") of the utm pairs that base (a URL
// without fragment) does not carry yet.
func utmToAdd(base string, utm []kv) string {
	_, query, _ := strings.Cut(base, "?")
	// Names pair by pair, as mergeQuery reads them: url.ParseQuery would drop
	// a pair with a bad escape and so add its utm_* a second time.
	have := map[string]struct{}{}
	for _, pair := range strings.Split(query, "&") {
		if pair != "" {
			have[queryKey(pair)] = struct{}{}
		}
	}
	var add []string
	for _, p := range utm {
		if _, ok := have[p.k]; !ok {
			add = append(add, p.k+"="+url.QueryEscape(p.v))
		}
	}
	return strings.Join(add, "&")
}

// appendQuery adds raw query pairs to a URL without a fragment.
func appendQuery(base, pairs string) string {
	switch {
	case pairs == "":
		return base
	case !strings.Contains(base, "?"):
		return base + "?" + pairs
	case strings.HasSuffix(base, "?") || strings.HasSuffix(base, "&"):
		return base + pairs
	default:
		return base + "&" + pairs
	}
}
