package capture

import (
	"net/netip"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/kurz-dev/kurz/internal/analytics"
)

// Truncation of a click's strings in its slot, in bytes. A browser's
// User-Agent is 100-200 bytes (a visitor hash covers the truncated one, the
// same for every click of the client); a Referer's host comes before its
// path; the visitor's utm_* pairs come with the query's first bytes.
const (
	MaxUA      = 256
	MaxReferer = 256 + 8 // scheme and the longest DNS name
	MaxQuery   = 512
)

// Link is what a click slot names the clicked link by: the redirect's
// Entry (a pointer, so storing it allocates nothing). The consumer asks it
// for the link's identity (AnalyticsRef) once per Link it keeps; per click
// it reads only the slot, which carries the destination the redirect
// chose. A Link's identity never changes (a changed Link is a new Entry):
// the consumer keeps what it derives from it per Link, keyed by the
// pointer the interface holds: a Link is a pointer type.
type Link interface {
	AnalyticsRef() analytics.LinkRef
}

// Click is one slot of the Ring: what the redirect copies of a click, fixed
// size, so that filling it allocates nothing.
type Click struct {
	Time time.Time
	Link Link
	// Dest and DestUTM are the URL the redirect sent the visitor to before
	// their query was merged in: Dest followed by DestUTM (the link's utm_*
	// parameters, "" when Dest has them already). The redirect chose Dest
	// (device targeting) with the Entry in its cache; the consumer, which
	// reads its UTM values from it, does not choose again.
	Dest, DestUTM string
	// IP is the client's address (hashed, never stored).
	IP      netip.Addr
	Country [2]byte
	uaLen   uint16
	refLen  uint16
	qLen    uint16
	// text is the User-Agent, the Referer and the query one after the
	// other, so that a click writes, and the consumer reads, the cache
	// lines its strings fill (a browser's click: about 200 bytes, three
	// or four lines) rather than the first lines of three arrays.
	text [MaxUA + MaxReferer + MaxQuery]byte
}

// SetText copies the User-Agent, the Referer header and the visitor's query
// string, truncated to MaxUA, MaxReferer and MaxQuery bytes.
func (c *Click) SetText(ua, referer, query []byte) {
	n := copy(c.text[:MaxUA], ua)
	r := copy(c.text[n:n+MaxReferer], referer)
	q := copy(c.text[n+r:n+r+MaxQuery], query)
	c.uaLen, c.refLen, c.qLen = uint16(n), uint16(r), uint16(q)
}

// SetCountry copies a two-byte country header value; any other length is
// unknown.
func (c *Click) SetCountry(v []byte) {
	if len(v) == 2 {
		c.Country = [2]byte{v[0], v[1]}
	} else {
		c.Country = [2]byte{}
	}
}

// UA, Referer and Query are the copied values; they alias the slot.
func (c *Click) UA() []byte { return c.text[:c.uaLen] }
func (c *Click) Referer() []byte {
	return c.text[c.uaLen : c.uaLen+c.refLen]
}
func (c *Click) Query() []byte {
	start := int(c.uaLen) + int(c.refLen)
	return c.text[start : start+int(c.qLen)]
}

type slotData struct {
	seq atomic.Uint64
	Click
}

// ringSlot is a slot padded to whole cache lines (the ring's array, a large
// allocation, starts on a page): no two slots share a line, so a producer
// filling one does not take a line the consumer reads from the one before.
type ringSlot struct {
	slotData
	_ [(64 - unsafe.Sizeof(slotData{})%64) % 64]byte
}

// Ring is a bounded multi-producer, single-consumer queue of Click slots
// (Vyukov's bounded queue): redirect goroutines Reserve a slot, fill it and
// Commit it, the consumer goroutine takes them in order. A full ring drops
// the click and counts it; nothing waits and nothing allocates.
type Ring struct {
	mask  uint64
	slots []ringSlot
	head  atomic.Uint64 // next position to reserve
	tail  uint64        // next position to take (consumer only)
	// dropped counts clicks a full ring refused.
	dropped atomic.Uint64
}

// SlotBytes is the size of one slot, for memory bounds.
const SlotBytes = int(unsafe.Sizeof(ringSlot{}))

// NewRing returns a ring of size slots rounded up to a power of two.
func NewRing(size int) *Ring {
	n := 1
	for n < size {
		n <<= 1
	}
	r := &Ring{mask: uint64(n - 1), slots: make([]ringSlot, n)}
	for i := range r.slots {
		r.slots[i].seq.Store(uint64(i))
	}
	return r
}

// Cap is the number of slots.
func (r *Ring) Cap() int { return len(r.slots) }

// Len is the number of clicks reserved and not taken yet.
func (r *Ring) Len() int { return int(r.head.Load() - r.tail) }

// Dropped is the number of clicks a full ring refused.
func (r *Ring) Dropped() uint64 { return r.dropped.Load() }

// Reservation is a reserved slot, to fill and Commit.
type Reservation struct {
	s   *ringSlot
	pos uint64
}

// Reserve returns a slot to fill, or false when the ring is full (the click
// is dropped and counted).
func (r *Ring) Reserve() (*Click, Reservation, bool) {
	pos := r.head.Load()
	for {
		s := &r.slots[pos&r.mask]
		seq := s.seq.Load()
		switch d := int64(seq - pos); {
		case d == 0:
			if r.head.CompareAndSwap(pos, pos+1) {
				return &s.Click, Reservation{s, pos}, true
			}
			pos = r.head.Load()
		case d < 0: // the consumer has not taken this slot's last click
			r.dropped.Add(1)
			ringFull.Inc()
			return nil, Reservation{}, false
		default: // another producer took pos
			pos = r.head.Load()
		}
	}
}

// Commit hands a filled slot to the consumer.
func (r *Ring) Commit(v Reservation) { v.s.seq.Store(v.pos + 1) }

// take calls f with each committed click in order, at most max, and
// returns how many it took. One goroutine only. The slot is reused once f
// returns: f copies what it keeps.
func (r *Ring) take(max int, f func(*Click)) int {
	n := 0
	for ; n < max; n++ {
		s := &r.slots[r.tail&r.mask]
		if s.seq.Load() != r.tail+1 {
			break
		}
		f(&s.Click)
		// The Entry and its URLs may be collected once replaced.
		s.Link, s.Dest, s.DestUTM = nil, "", ""
		s.seq.Store(r.tail + r.mask + 1)
		r.tail++
	}
	return n
}
