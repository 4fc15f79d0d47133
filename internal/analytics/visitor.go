package analytics

import (
	"crypto/rand"
	"encoding/binary"
	"fmt"
	"hash"
	"net/netip"
	"time"

	"golang.org/x/crypto/blake2b"
)

// Salt lengths: BLAKE2b takes keys of up to 64 bytes; below 16 a salt could
// be searched for.
const (
	MinSaltLen = 16
	MaxSaltLen = blake2b.Size
	SaltLen    = 32 // what NewSalt makes
)

// NewSalt returns a fresh random salt of SaltLen bytes.
func NewSalt() []byte {
	b := make([]byte, SaltLen)
	_, _ = rand.Read(b) // crypto/rand.Read never fails (Go 1.24+)
	return b
}

// VisitorHasher computes Event.Visitor: keyed BLAKE2b-64 of the client's IP
// (16 bytes, IPv4 as IPv4-mapped IPv6) followed by its User-Agent, keyed
// with one day's salt. The IP's fixed length keeps the input unambiguous.
// Reusing a VisitorHasher allocates nothing; it is not safe for concurrent
// use (one per writer goroutine).
//
// What a salt holder learns during its day: with the salt and a candidate
// (IP, User-Agent) pair one can compute its hash and find that visitor's
// clicks of that day in the store (which links, when, from where they were
// referred); IPv4 space is small enough to enumerate (2^32 hashes per
// User-Agent), so anyone with the salt and the store can recover the IP of a
// day's visitor with a common User-Agent in minutes. Without the salt the
// hashes are unlinkable to IPs and across days; once the salt is destroyed
// (it lives in the cluster's Secret for today and tomorrow only, and is never
// written to the store) no one can.
type VisitorHasher struct {
	h   hash.Hash
	ip  [16]byte
	sum [blake2b.Size]byte
}

// NewVisitorHasher returns a hasher keyed with salt (MinSaltLen to
// MaxSaltLen bytes).
func NewVisitorHasher(salt []byte) (*VisitorHasher, error) {
	if len(salt) < MinSaltLen || len(salt) > MaxSaltLen {
		return nil, fmt.Errorf("visitor salt: %d bytes, want %d to %d", len(salt), MinSaltLen, MaxSaltLen)
	}
	h, err := blake2b.New(8, salt)
	if err != nil {
		return nil, fmt.Errorf("visitor salt: %w", err)
	}
	return &VisitorHasher{h: h}, nil
}

// Hash is the visitor of a click from ip with User-Agent ua, never 0
// (which means unknown).
func (v *VisitorHasher) Hash(ip netip.Addr, ua []byte) uint64 {
	v.ip = ip.As16()
	v.h.Reset()
	v.h.Write(v.ip[:])
	v.h.Write(ua)
	x := binary.LittleEndian.Uint64(v.h.Sum(v.sum[:0]))
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
