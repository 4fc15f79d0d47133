package capture

import (
	"hash/maphash"
	"unsafe"

	"github.com/kurz-dev/kurz/internal/analytics"
)

// Bounds of the consumer's tables: a flood of distinct values (referrers,
// cities, User-Agents, links) costs at most this many entries each; then every
// table starts over (values already handed out stay valid: the Aggregator
// finds their rows by value once, see analytics.Event.Ident).
const (
	internMax    = 8192
	linkCacheMax = 16384
	uaCacheMax   = analytics.DefaultUACacheSize
	refCacheMax  = 4096
)

// tablesBytes is what the full tables take at most: interned strings (up
// to 255 B and a map entry), links (their linkInfo, 440 B: LinkRef, three
// destinations with their UTM values, the aggregator's memo; a map entry;
// the Entry they keep), User-Agent classes, Referer headers (up to
// MaxReferer bytes and a map entry; the host is an interned string).
const tablesBytes = internMax*320 + linkCacheMax*512 + uaCacheMax*48 + refCacheMax*(MaxReferer+32)

// linkInfo is what the consumer keeps of one Link (one redirect Entry):
// its LinkRef, whose address is the events' Ident, and the interned UTM
// values of the destinations its clicks were sent to (the link's URL, and
// its iOS and Android targets).
type linkInfo struct {
	ref   analytics.LinkRef
	n     int
	dests [3]destUTM
	memo  analytics.AggMemo // the events' Memo
}

type destUTM struct {
	dest, utm string
	u         analytics.UTM
}

// uaInfo is a User-Agent's class with its names interned.
type uaInfo struct {
	device      analytics.Device
	os, browser string
}

// countryOf is a two-letter header value's normalized, interned country,
// "" unknown; set marks a computed entry.
type countryOf struct {
	s   string
	set bool
}

// tables are the consumer's caches and interned strings, so that a click
// of a known link from a known client costs a few lookups by pointer or
// hash, nothing is built or copied, and the aggregator keys the event by
// pointers (Event.Ident). One goroutine (the consumer's) owns them.
type tables struct {
	strs      map[string]string
	links     map[unsafe.Pointer]*linkInfo
	uas       map[uint64]uaInfo
	refs      map[string]string // Referer header -> interned host
	seed      maphash.Seed
	countries [26 * 26]countryOf
	// key is city's scratch space for a city's key.
	key []byte
}

func newTables() tables {
	return tables{
		strs: map[string]string{}, links: map[unsafe.Pointer]*linkInfo{}, uas: map[uint64]uaInfo{},
		refs: map[string]string{}, seed: maphash.MakeSeed(),
	}
}

// startOver empties every table (one is full).
func (t *tables) startOver() {
	clear(t.strs)
	clear(t.links)
	clear(t.uas)
	clear(t.refs)
	t.countries = [26 * 26]countryOf{}
}

// intern returns the one copy of s (a whole allocation of its own, as
// Event.Ident requires), made when s is new: s may alias the ring's slot.
func (t *tables) intern(s string) string {
	if s == "" {
		return ""
	}
	if v, ok := t.strs[s]; ok {
		return v
	}
	if len(t.strs) >= internMax {
		t.startOver()
	}
	v := string([]byte(s)) // a copy: s may alias the ring's slot
	t.strs[v] = v
	return v
}

// internUTM interns u's values.
func (t *tables) internUTM(u analytics.UTM) analytics.UTM {
	return analytics.UTM{Source: t.intern(u.Source), Medium: t.intern(u.Medium), Campaign: t.intern(u.Campaign)}
}

// link is what the consumer keeps of l, made at its first click.
func (t *tables) link(l Link) *linkInfo {
	k := linkKey(l)
	if li, ok := t.links[k]; ok {
		return li
	}
	if len(t.links) >= linkCacheMax {
		t.startOver()
	}
	li := &linkInfo{ref: l.AnalyticsRef()}
	t.links[k] = li
	return li
}

// linkKey is l's identity as a map key: the pointer the interface holds
// (every Link is a pointer, the redirect's *Entry). A map keyed by it hashes
// 8 bytes where one keyed by the interface hashes through its type, and the
// key keeps the Link alive as the interface did, so no other Link can take
// its address while the table holds it.
func linkKey(l Link) unsafe.Pointer { return (*[2]unsafe.Pointer)(unsafe.Pointer(&l))[1] }

// destUTM is the interned UTM values of the URL dest+utm, one of li's
// destinations. A Link's destinations never change (a changed Link is a
// new Entry), so they are parsed once; the strings compare by pointer
// first.
func (t *tables) destUTM(li *linkInfo, dest, utm string) analytics.UTM {
	for i := range li.n {
		if d := &li.dests[i]; d.dest == dest && d.utm == utm {
			return d.u
		}
	}
	u := t.internUTM(analytics.UTMOfURL(dest + utm))
	if li.n < len(li.dests) {
		li.dests[li.n] = destUTM{dest: dest, utm: utm, u: u}
		li.n++
	}
	return u
}

// ua is the class of ua with its names interned; c parses a new one.
func (t *tables) ua(c *analytics.UAClassifier, ua []byte) uaInfo {
	h := maphash.Bytes(t.seed, ua)
	if v, ok := t.uas[h]; ok {
		return v
	}
	if len(t.uas) >= uaCacheMax {
		t.startOver()
	}
	cls := c.Parse(bytesString(ua))
	v := uaInfo{device: cls.Device, os: t.intern(cls.OS), browser: t.intern(cls.Browser)}
	t.uas[h] = v
	return v
}

// referrer is the interned referrer host of a Referer header (which may
// alias the ring's slot): parsed at its first click, then a map lookup.
func (t *tables) referrer(r []byte) string {
	if host, ok := t.refs[bytesString(r)]; ok {
		return host
	}
	host := t.intern(analytics.ReferrerHost(bytesString(r)))
	if len(t.refs) >= refCacheMax {
		clear(t.refs) // the hosts stay interned: only the parses go
	}
	t.refs[string(r)] = host
	return host
}

// country is the interned Event.Country of a two-byte header value.
func (t *tables) country(v [2]byte) string {
	a, b := v[0]&^0x20, v[1]&^0x20 // ASCII upper case
	if a < 'A' || a > 'Z' || b < 'A' || b > 'Z' {
		return "" // not a country code (NormalizeCountry agrees)
	}
	c := &t.countries[int(a-'A')*26+int(b-'A')]
	if !c.set {
		*c = countryOf{s: t.intern(analytics.NormalizeCountry(bytesString(v[:]))), set: true}
	}
	return c.s
}

// city is the interned Event.City of a city named name in country (""
// when either is unknown or the name unusable, analytics.CityKey). Cities
// are interned like every other value, so they share its bound: a file's
// cities are finite, but the clients choose their addresses.
func (t *tables) city(country, name string) string {
	t.key = analytics.AppendCityKey(t.key[:0], country, name)
	return t.intern(bytesString(t.key))
}
