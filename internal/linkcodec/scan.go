package linkcodec

import "bytes"

// scan finds where a JSON object or array ends by its brackets and
// strings alone, checking nothing else: far cheaper than a tokenizer,
// which validates every byte, and enough to cut a stream into frames and
// find a watch event's object, because every byte it passes over is then
// read by one that validates (readEvent's tokenizer, the object decoder).
// kube-apiserver's frames were read three times over before a Link's was
// unmarshaled: by the framer, by readEvent to find the object, by the
// decoder.
type scan struct {
	depth    int
	inString bool
}

// run scans b from i, where the last call stopped (0 on b's first byte,
// which must be '{' or '['), and returns the index just past the value's
// end, or -1 when b ends first. b must still hold the value from its first
// byte: an escaped quote is told by the backslashes before it.
func (s *scan) run(b []byte, i int) int {
	for i < len(b) {
		if s.inString {
			k := bytes.IndexByte(b[i:], '"')
			if k < 0 {
				return -1
			}
			q := i + k
			backslashes := 0
			for j := q - 1; j >= 0 && b[j] == '\\'; j-- {
				backslashes++
			}
			s.inString = backslashes%2 == 1
			i = q + 1
			continue
		}
		switch b[i] {
		case '"':
			s.inString = true
		case '{', '[':
			s.depth++
		case '}', ']':
			s.depth--
			if s.depth == 0 {
				return i + 1
			}
		}
		i++
	}
	return -1
}

// isSpace tells JSON's whitespace.
func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }
