package analytics

import (
	"time"
	"unsafe"
)

// aggKey is what makes two events one row: link, minute, visitor and every
// dimension, by value.
type aggKey struct {
	link                              LinkRef
	minute                            int64
	visitor                           uint64
	device                            Device
	os, browser, country, city        string
	referrer                          string
	utmSource, utmMedium, utmCampaign string
}

// identKey is an interned event's key (Event.Ident): the same fields as
// aggKey, each string by the address of the producer's one copy, so that a
// click is one map access over 96 bytes rather than the hash of a dozen
// strings (the link's uid, names and every dimension). The pointers keep
// what they point to alive while the key is in the index, so an address is
// never reused for another value before Take clears it.
type identKey struct {
	link                              *LinkRef
	minute                            int64
	visitor                           uint64
	os, browser, country, city        *byte
	referrer                          *byte
	utmSource, utmMedium, utmCampaign *byte
	device                            Device
}

// Aggregator sums identical events (same link, UTC minute, visitor and
// dimensions) into one Event with a count, before they are written: a
// writer's buffer then holds one row per distinct click, not per click.
// One writer goroutine owns it; it is not safe for concurrent use.
//
// An interned event (Event.Ident set) is looked up by identity first; only
// its first click with a new combination of pointers hashes its values, to
// find a row an event with the same values under other pointers started
// (the producer started its tables over). So rows are summed exactly as by
// value, at the cost of a pointer lookup per click.
type Aggregator struct {
	index  map[aggKey]int
	ident  map[identKey]int
	events []Event
	// counts are the rows' clicks, apart from events so that a click
	// touches 8 bytes of a small slice, not a 250-byte Event; Take copies
	// them into the events.
	counts []int64
	clicks int64
	// epoch counts Takes: an AggMemo of an earlier one names a row gone.
	epoch uint64
}

// NewAggregator returns an Aggregator sized for about n distinct events.
func NewAggregator(n int) *Aggregator {
	return &Aggregator{
		index: make(map[aggKey]int, n), ident: make(map[identKey]int, n),
		events: make([]Event, 0, n), counts: make([]int64, 0, n),
	}
}

// Add counts e.Clicks clicks (one when zero) of e, truncated to its minute.
func (a *Aggregator) Add(e Event) { a.Count(&e) }

// Count is Add without copying e: e is read, not kept.
func (a *Aggregator) Count(e *Event) {
	clicks := e.Clicks
	if clicks == 0 {
		clicks = 1
	}
	m := e.Minute()
	a.clicks += clicks
	var ik identKey
	if e.Ident != nil {
		ik = identKey{
			link: e.Ident, minute: m, visitor: e.Visitor, device: e.Device,
			os: strPtr(e.OS), browser: strPtr(e.Browser), country: strPtr(e.Country), city: strPtr(e.City), referrer: strPtr(e.Referrer),
			utmSource: strPtr(e.UTMSource), utmMedium: strPtr(e.UTMMedium), utmCampaign: strPtr(e.UTMCampaign),
		}
		if m := e.Memo; m != nil && m.agg == a && m.epoch == a.epoch && m.key == ik {
			a.counts[m.row] += clicks
			return
		}
		if i, ok := a.ident[ik]; ok {
			a.counts[i] += clicks
			a.remember(e.Memo, ik, i)
			return
		}
	}
	k := aggKey{
		link: e.Link, minute: m, visitor: e.Visitor, device: e.Device,
		os: e.OS, browser: e.Browser, country: e.Country, city: e.City, referrer: e.Referrer,
		utmSource: e.UTMSource, utmMedium: e.UTMMedium, utmCampaign: e.UTMCampaign,
	}
	i, ok := a.index[k]
	if ok {
		a.counts[i] += clicks
	} else {
		i = len(a.events)
		a.index[k] = i
		a.events = append(a.events, *e)
		a.counts = append(a.counts, clicks)
		row := &a.events[i]
		row.Time, row.Ident, row.Memo = time.Unix(m*60, 0).UTC(), nil, nil
	}
	if e.Ident != nil {
		a.ident[ik] = i
		a.remember(e.Memo, ik, i)
	}
}

// remember makes m (if any) name row i for the key ik until the next Take.
func (a *Aggregator) remember(m *AggMemo, ik identKey, i int) {
	if m != nil {
		*m = AggMemo{agg: a, epoch: a.epoch, key: ik, row: i}
	}
}

// strPtr is the address of s's bytes, nil for "" (which may have any).
func strPtr(s string) *byte {
	if s == "" {
		return nil
	}
	return unsafe.StringData(s)
}

// Len is the number of distinct events held (the rows a flush writes).
func (a *Aggregator) Len() int { return len(a.events) }

// Clicks is the number of clicks held.
func (a *Aggregator) Clicks() int64 { return a.clicks }

// Take returns what was added since the last Take as a Batch with id, and
// empties the aggregator. The Batch owns its events: the Aggregator starts
// a new slice.
func (a *Aggregator) Take(id string) Batch {
	for i := range a.events {
		a.events[i].Clicks = a.counts[i]
	}
	b := Batch{ID: id, Events: a.events}
	a.events = make([]Event, 0, cap(a.events))
	a.counts = a.counts[:0]
	clear(a.index)
	clear(a.ident)
	a.clicks = 0
	a.epoch++
	return b
}
