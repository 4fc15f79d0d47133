package linkquery

import "strings"

// lowerASCII maps A-Z to a-z and every other byte to itself.
var lowerASCII = func() (t [256]byte) {
	for i := range t {
		t[i] = byte(i)
		if 'A' <= i && i <= 'Z' {
			t[i] = byte(i) + 'a' - 'A'
		}
	}
	return t
}()

// foldASCII lowercases the ASCII letters of s.
func foldASCII(s string) string {
	b := []byte(s)
	for i, c := range b {
		b[i] = lowerASCII[c]
	}
	return string(b)
}

// containsFold reports whether s contains needle, ASCII letters compared
// without regard to case; needle is already folded (foldASCII) and not
// empty. It reads s in place: no lowercased copies of keys and URLs are
// kept or made. Candidates are found with strings.IndexByte (vectorized)
// for the first byte in either case.
func containsFold(s, needle string) bool {
	first, upper := needle[0], needle[0]
	if 'a' <= first && first <= 'z' {
		upper = first - ('a' - 'A')
	}
	for len(s) >= len(needle) {
		i := indexEither(s[:len(s)-len(needle)+1], first, upper)
		if i < 0 {
			return false
		}
		if hasPrefixFold(s[i+1:], needle[1:]) {
			return true
		}
		s = s[i+1:]
	}
	return false
}

// indexEither is the index of the first a or b in s, -1 when neither is.
func indexEither(s string, a, b byte) int {
	i := strings.IndexByte(s, a)
	if a == b {
		return i
	}
	if i >= 0 {
		s = s[:i] // b matters only before a
	}
	if j := strings.IndexByte(s, b); j >= 0 {
		return j
	}
	return i
}

// hasPrefixFold reports whether s starts with the folded prefix.
func hasPrefixFold(s, prefix string) bool {
	if len(s) < len(prefix) {
		return false
	}
	for i := 0; i < len(prefix); i++ {
		if lowerASCII[s[i]] != prefix[i] {
			return false
		}
	}
	return true
}
