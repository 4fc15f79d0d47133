package dns

import (
	"errors"
	"strings"
	"sync"

	"golang.org/x/net/publicsuffix"
)

// ErrZoneBusy is returned by Verify when the domain's zone already has as
// many verifications running as the Verifier allows. Nothing was asked; the
// caller retries later.
var ErrZoneBusy = errors.New("DNS checks of this zone are busy")

// Zone is the registrable domain (eTLD+1) of a hostname, the unit whose
// name servers a slow or hostile zone makes slow: links.example.com and
// go.example.com share example.com's servers. A name without one (a bare
// public suffix, a single label) is its own zone.
func Zone(hostname string) string {
	h := strings.TrimSuffix(strings.ToLower(hostname), ".")
	if z, err := publicsuffix.EffectiveTLDPlusOne(h); err == nil {
		return z
	}
	return h
}

// zoneLimit counts verifications per zone, so one zone that never answers
// holds at most limit of the callers' workers for the DNS timeout, and the
// others go on verifying every other zone. It never blocks: a caller past
// the limit is told at once, as a blocked worker is what the limit is for.
type zoneLimit struct {
	limit int
	mu    sync.Mutex
	busy  map[string]int
}

func newZoneLimit(limit int) *zoneLimit {
	return &zoneLimit{limit: limit, busy: map[string]int{}}
}

// acquire takes a slot of zone; release gives it back.
func (z *zoneLimit) acquire(zone string) (release func(), ok bool) {
	if z.limit <= 0 {
		return func() {}, true
	}
	z.mu.Lock()
	defer z.mu.Unlock()
	if z.busy[zone] >= z.limit {
		return nil, false
	}
	z.busy[zone]++
	return func() {
		z.mu.Lock()
		defer z.mu.Unlock()
		if z.busy[zone]--; z.busy[zone] == 0 {
			delete(z.busy, zone)
		}
	}, true
}
