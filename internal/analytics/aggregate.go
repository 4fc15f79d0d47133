package analytics

import "time"

// aggKey is what makes two events one row: link, minute, visitor and every
// dimension.
type aggKey struct {
	link                              LinkRef
	minute                            int64
	visitor                           uint64
	device                            Device
	os, browser, country, referrer    string
	utmSource, utmMedium, utmCampaign string
}

// Aggregator sums identical events (same link, UTC minute, visitor and
// dimensions) into one Event with a count, before they are written: a
// writer's buffer then holds one row per distinct click, not per click.
// One writer goroutine owns it; it is not safe for concurrent use.
type Aggregator struct {
	index  map[aggKey]int
	events []Event
	clicks int64
}

// NewAggregator returns an Aggregator sized for about n distinct events.
func NewAggregator(n int) *Aggregator {
	return &Aggregator{index: make(map[aggKey]int, n), events: make([]Event, 0, n)}
}

// Add counts e.Clicks clicks (one when zero) of e, truncated to its minute.
func (a *Aggregator) Add(e Event) {
	if e.Clicks == 0 {
		e.Clicks = 1
	}
	m := e.Minute()
	k := aggKey{
		link: e.Link, minute: m, visitor: e.Visitor, device: e.Device,
		os: e.OS, browser: e.Browser, country: e.Country, referrer: e.Referrer,
		utmSource: e.UTMSource, utmMedium: e.UTMMedium, utmCampaign: e.UTMCampaign,
	}
	a.clicks += e.Clicks
	if i, ok := a.index[k]; ok {
		a.events[i].Clicks += e.Clicks
		return
	}
	e.Time = time.Unix(m*60, 0).UTC()
	a.index[k] = len(a.events)
	a.events = append(a.events, e)
}

// Len is the number of distinct events held (the rows a flush writes).
func (a *Aggregator) Len() int { return len(a.events) }

// Clicks is the number of clicks held.
func (a *Aggregator) Clicks() int64 { return a.clicks }

// Take returns what was added since the last Take as a Batch with id, and
// empties the aggregator. The Batch owns its events: the Aggregator starts
// a new slice.
func (a *Aggregator) Take(id string) Batch {
	b := Batch{ID: id, Events: a.events}
	a.events = make([]Event, 0, cap(a.events))
	clear(a.index)
	a.clicks = 0
	return b
}
