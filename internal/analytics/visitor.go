package analytics

import (
	"bytes"
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"net/netip"
	"time"

	"golang.org/x/crypto/blake2b"

	"github.com/kurz-dev/kurz/internal/analytics/siphash"
)

// A salt names its algorithm, so that a day's visitor values never change
// during that day, whatever mix of kurz versions hashes its clicks:
//
//   - A SipHash salt, which NewSalt makes: SipHashSaltPrefix followed by the
//     128-bit key in hex, 69 bytes.
//   - A BLAKE2b salt: 16 to 64 raw bytes, as kurz made them before SipHash
//     (32 random bytes). They last until their day ends: a Secret holds
//     today's and tomorrow's, so two days after an upgrade none is left.
//   - A salt of a newer kurz: SaltVersionPrefix and a version this one does
//     not know. It is kept (never replaced) and not used: its day's clicks
//     have no visitor on this replica rather than another visitor value.
//
// A SipHash salt is longer than 64 bytes on purpose: kurz before this
// format takes 16 to 64 bytes as a BLAKE2b key and skips longer values
// without rewriting them (salt.Keeper), so an old replica during a rolling
// upgrade counts no visitor for a SipHash day instead of other hashes of
// the same visitors, and does not fight over the Secret.
const (
	SaltVersionPrefix = "kurz-visitor-salt/"
	SipHashSaltPrefix = SaltVersionPrefix + "v2 siphash-2-4 key="

	MinBLAKE2bSaltLen = 16 // below, a salt could be searched for
	MaxBLAKE2bSaltLen = blake2b.Size
	sipHashSaltLen    = len(SipHashSaltPrefix) + 2*siphash.KeySize
)

// An old replica must not take a SipHash salt for a BLAKE2b key.
var _ [sipHashSaltLen - MaxBLAKE2bSaltLen - 1]struct{}

// SaltKind is the algorithm a salt is for.
type SaltKind int

const (
	SaltInvalid SaltKind = iota // not a salt: to replace
	SaltBLAKE2b                 // made before SipHash: keyed BLAKE2b-64
	SaltSipHash                 // SipHash-2-4
	SaltNewer                   // of a kurz newer than this one: kept, not used
)

// KindOf is the kind of salt.
func KindOf(salt []byte) SaltKind {
	switch {
	case bytes.HasPrefix(salt, []byte(SipHashSaltPrefix)):
		if len(salt) != sipHashSaltLen {
			return SaltInvalid
		}
		var k [siphash.KeySize]byte
		if _, err := hex.Decode(k[:], salt[len(SipHashSaltPrefix):]); err != nil {
			return SaltInvalid
		}
		return SaltSipHash
	case bytes.HasPrefix(salt, []byte(SaltVersionPrefix)):
		return SaltNewer
	case len(salt) >= MinBLAKE2bSaltLen && len(salt) <= MaxBLAKE2bSaltLen:
		return SaltBLAKE2b
	}
	return SaltInvalid
}

// Usable reports whether this kurz hashes with a salt of kind k.
func (k SaltKind) Usable() bool { return k == SaltBLAKE2b || k == SaltSipHash }

// NewSalt returns a fresh SipHash salt with a random key.
func NewSalt() []byte {
	var k [siphash.KeySize]byte
	_, _ = rand.Read(k[:]) // crypto/rand.Read never fails (Go 1.24+)
	return SipHashSalt(k)
}

// SipHashSalt is the salt of key k.
func SipHashSalt(k [siphash.KeySize]byte) []byte {
	return hex.AppendEncode([]byte(SipHashSaltPrefix), k[:])
}

// VisitorHasher computes Event.Visitor: a keyed 64-bit hash of the client's
// IP (16 bytes, IPv4 as IPv4-mapped IPv6) followed by its User-Agent, keyed
// with one day's salt: SipHash-2-4, a pseudo-random function made for short
// inputs (0.2 µs for a 150-byte User-Agent), or keyed BLAKE2b-64 for a salt
// made before SipHash (three times as much). Both are PRFs: without the key
// their outputs look random, so the argument below holds for either. The
// IP's fixed length keeps the input unambiguous. Reusing a VisitorHasher
// allocates nothing; it is not safe for concurrent use (one per writer
// goroutine).
//
// What a salt holder learns during its day: with the salt and a candidate
// (IP, User-Agent) pair one can compute its hash and find that visitor's
// clicks of that day in the store (which links, when, from where they were
// referred); IPv4 space is small enough to enumerate (2^32 hashes per
// User-Agent: 15 minutes on one core at SipHash's speed, less on many), so
// anyone with the salt and the store can recover the IP of a day's visitor
// with a common User-Agent. Without the salt the hashes are unlinkable to IPs and across
// days; once the salt is destroyed (it lives in the cluster's Secret for
// today and tomorrow only, and is never written to the store) no one can.
type VisitorHasher struct {
	sip siphash.Key
	b2  hash.Hash // nil: SipHash
	ip  [16]byte
	sum [blake2b.Size]byte
}

// NewVisitorHasher returns a hasher keyed with salt, with the algorithm
// the salt names (KindOf).
func NewVisitorHasher(salt []byte) (*VisitorHasher, error) {
	switch KindOf(salt) {
	case SaltSipHash:
		var k [siphash.KeySize]byte
		_, _ = hex.Decode(k[:], salt[len(SipHashSaltPrefix):]) // KindOf checked it
		return &VisitorHasher{sip: siphash.KeyFrom(k)}, nil
	case SaltBLAKE2b:
		h, err := blake2b.New(8, salt)
		if err != nil {
			return nil, fmt.Errorf("visitor salt: %w", err)
		}
		return &VisitorHasher{b2: h}, nil
	case SaltNewer:
		return nil, errors.New("visitor salt: made by a newer kurz (an unknown version)")
	}
	return nil, fmt.Errorf("visitor salt: %d bytes, neither a SipHash salt (%q and 32 hex digits) nor %d to %d bytes", len(salt), SipHashSaltPrefix, MinBLAKE2bSaltLen, MaxBLAKE2bSaltLen)
}

// Hash is the visitor of a click from ip with User-Agent ua, never 0
// (which means unknown).
func (v *VisitorHasher) Hash(ip netip.Addr, ua []byte) uint64 {
	v.ip = ip.As16()
	var x uint64
	if v.b2 == nil {
		x = v.sip.Sum64Words(v.ip, ua)
	} else {
		v.b2.Reset()
		v.b2.Write(v.ip[:])
		v.b2.Write(ua)
		x = binary.LittleEndian.Uint64(v.b2.Sum(v.sum[:0]))
	}
	if x == 0 {
		return 1
	}
	return x
}

// DaySalt is the salt of one UTC day.
type DaySalt struct {
	Day  time.Time // any time in that UTC day
	Salt []byte
}

// Visitors picks the salt of a click's UTC day: a click at 23:59:59 that is
// processed after midnight is still hashed with its own day's salt, so the
// day's distinct count is right. The salts come from the shared Secret
// (today's and tomorrow's); a click of a day without a salt gets Visitor 0.
type Visitors struct {
	days map[int64]*VisitorHasher
}

// NewVisitors returns a Visitors with the given days' salts.
func NewVisitors(salts ...DaySalt) (*Visitors, error) {
	v := &Visitors{days: make(map[int64]*VisitorHasher, len(salts))}
	for _, s := range salts {
		h, err := NewVisitorHasher(s.Salt)
		if err != nil {
			return nil, fmt.Errorf("day %s: %w", s.Day.UTC().Format(time.DateOnly), err)
		}
		v.days[UnixDay(s.Day)] = h
	}
	return v, nil
}

// Hash is the visitor of a click at t from ip with User-Agent ua, or 0 when
// there is no salt for t's UTC day.
func (v *Visitors) Hash(t time.Time, ip netip.Addr, ua []byte) uint64 {
	h := v.days[UnixDay(t)]
	if h == nil {
		return 0
	}
	return h.Hash(ip, ua)
}

// UnixDay is t's UTC day as days since 1970-01-01.
func UnixDay(t time.Time) int64 {
	s := t.Unix()
	if s < 0 {
		return (s - 86399) / 86400
	}
	return s / 86400
}
