// Package siphash is SipHash-2-4 (Aumasson and Bernstein, "SipHash: a fast
// short-input PRF", 2012): a keyed pseudo-random function with a 128-bit
// key and a 64-bit output, made for short inputs and resistant to
// hash flooding. Click analytics keys it with a day's salt to hash a
// visitor's address and User-Agent (analytics.VisitorHasher); a BLAKE2b
// call on the same 150 bytes costs three times as much, most of it in
// processing the key as a block of its own.
//
// Only the one-shot form is here: every input the caller has is in memory.
package siphash

import (
	"encoding/binary"
	"math/bits"
)

// KeySize is the size of a key in bytes.
const KeySize = 16

// Key is a SipHash key as its two little-endian words (k0, k1 of the paper).
type Key struct{ K0, K1 uint64 }

// KeyFrom reads a Key from its 16 bytes.
func KeyFrom(b [KeySize]byte) Key {
	return Key{binary.LittleEndian.Uint64(b[:8]), binary.LittleEndian.Uint64(b[8:])}
}

// The rounds are written out on local words (a method on a state struct
// kept them in memory: three times the time).

// Sum64 is SipHash-2-4 of p under k.
func (k Key) Sum64(p []byte) uint64 {
	v0, v1, v2, v3 := k.K0^0x736f6d6570736575, k.K1^0x646f72616e646f6d, k.K0^0x6c7967656e657261, k.K1^0x7465646279746573
	return sum(v0, v1, v2, v3, p, len(p))
}

// Sum64Words is Sum64 of a's 16 bytes followed by p, without joining them:
// a visitor's address and its User-Agent.
func (k Key) Sum64Words(a [16]byte, p []byte) uint64 {
	v0, v1, v2, v3 := k.K0^0x736f6d6570736575, k.K1^0x646f72616e646f6d, k.K0^0x6c7967656e657261, k.K1^0x7465646279746573
	for i := 0; i < 16; i += 8 {
		m := binary.LittleEndian.Uint64(a[i:])
		v3 ^= m
		v0, v1, v2, v3 = round(v0, v1, v2, v3)
		v0, v1, v2, v3 = round(v0, v1, v2, v3)
		v0 ^= m
	}
	return sum(v0, v1, v2, v3, p, 16+len(p))
}

// sum compresses p's words into the state, then its last bytes with the
// message's length n, and finalizes (c = 2, d = 4 rounds).
func sum(v0, v1, v2, v3 uint64, p []byte, n int) uint64 {
	for len(p) >= 8 {
		m := binary.LittleEndian.Uint64(p)
		v3 ^= m
		v0, v1, v2, v3 = round(v0, v1, v2, v3)
		v0, v1, v2, v3 = round(v0, v1, v2, v3)
		v0 ^= m
		p = p[8:]
	}
	m := uint64(n) << 56
	for i, c := range p {
		m |= uint64(c) << (8 * i)
	}
	v3 ^= m
	v0, v1, v2, v3 = round(v0, v1, v2, v3)
	v0, v1, v2, v3 = round(v0, v1, v2, v3)
	v0 ^= m
	v2 ^= 0xff
	v0, v1, v2, v3 = round(v0, v1, v2, v3)
	v0, v1, v2, v3 = round(v0, v1, v2, v3)
	v0, v1, v2, v3 = round(v0, v1, v2, v3)
	v0, v1, v2, v3 = round(v0, v1, v2, v3)
	return v0 ^ v1 ^ v2 ^ v3
}

// round is one SipRound.
func round(v0, v1, v2, v3 uint64) (uint64, uint64, uint64, uint64) {
	v0 += v1
	v1 = bits.RotateLeft64(v1, 13)
	v1 ^= v0
	v0 = bits.RotateLeft64(v0, 32)
	v2 += v3
	v3 = bits.RotateLeft64(v3, 16)
	v3 ^= v2
	v0 += v3
	v3 = bits.RotateLeft64(v3, 21)
	v3 ^= v0
	v2 += v1
	v1 = bits.RotateLeft64(v1, 17)
	v1 ^= v2
	v2 = bits.RotateLeft64(v2, 32)
	return v0, v1, v2, v3
}
