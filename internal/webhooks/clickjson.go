package webhooks

import (
	"strconv"
	"unicode/utf8"

	"github.com/kurz-dev/kurz/internal/analytics"
)

// The link.clicked body is written by hand, appended to a buffer the
// batcher reuses: encoding/json took about 2.5 µs a click (reflection,
// a view struct and its pointers per click), more than the rest of the
// click's way to the receiver. The bytes are exactly those json.Marshal
// writes for the envelope of clickView (TestClickJSONMatchesEncodingJSON
// and FuzzClickJSON compare them), so the payload of docs/webhooks.md is
// unchanged, HTML-safe escapes (\u003c) and invalid UTF-8 (\ufffd)
// included.

// clickEncoder appends clicks' JSON. Its buffers are reused; one
// goroutine only (the dispatcher's clicks loop).
type clickEncoder struct {
	// sec and stamp are the unix second last formatted and its
	// "2006-01-02T15:04:05" (clicks come in time order: most share it).
	sec   int64
	stamp []byte
	// url is the scratch of a click's short URL.
	url []byte
}

// appendTime appends t as formatTime prints it, quoted.
func (c *clickEncoder) appendTime(dst []byte, e *analytics.Event) []byte {
	t := e.Time.UTC()
	if sec := t.Unix(); sec != c.sec || c.stamp == nil {
		c.sec, c.stamp = sec, t.AppendFormat(c.stamp[:0], "2006-01-02T15:04:05")
	}
	dst = append(dst, '"')
	dst = append(dst, c.stamp...)
	// The format's ".000000": microseconds, truncated, zero padded.
	us := t.Nanosecond() / 1000
	dst = append(dst, '.',
		byte('0'+us/100000), byte('0'+us/10000%10), byte('0'+us/1000%10),
		byte('0'+us/100%10), byte('0'+us/10%10), byte('0'+us%10), 'Z', '"')
	return dst
}

// clicksHead starts a link.clicked body up to its first click; its
// timestamp is the first click's.
func (c *clickEncoder) clicksHead(dst []byte, first *analytics.Event) []byte {
	dst = append(dst, `{"type":"link.clicked","timestamp":`...)
	dst = c.appendTime(dst, first)
	return append(dst, `,"version":"`+PayloadVersion+`","data":{"clicks":[`...)
}

// clicksTail ends a link.clicked body after its last click.
const clicksTail = `]}}`

// appendClick appends e as one element of the clicks array: when, which
// link, the analytics dimensions (null when unknown) and the count; never
// Visitor.
func (c *clickEncoder) appendClick(dst []byte, e *analytics.Event) []byte {
	dst = append(dst, `{"timestamp":`...)
	dst = c.appendTime(dst, e)
	dst = append(dst, `,"count":`...)
	dst = strconv.AppendInt(dst, max(e.Clicks, 1), 10)
	dst = append(dst, `,"link":{"id":`...)
	dst = appendString(dst, e.Link.UID)
	dst = append(dst, `,"domain":`...)
	dst = appendString(dst, e.Link.Domain)
	dst = append(dst, `,"key":`...)
	dst = appendString(dst, e.Link.Key)
	// The URL is escaped whole, as encoding/json escapes the joined
	// string (invalid UTF-8 across the joins included).
	c.url = append(append(append(append(c.url[:0], "https://"...), e.Link.Domain...), '/'), e.Link.Key...)
	dst = append(dst, `,"link":`...)
	dst = appendString(dst, c.url)
	dst = append(dst, `},"device":`...)
	dst = appendString(dst, e.Device.String())
	dst = append(dst, `,"os":`...)
	dst = appendOrNull(dst, e.OS)
	dst = append(dst, `,"browser":`...)
	dst = appendOrNull(dst, e.Browser)
	dst = append(dst, `,"country":`...)
	dst = appendOrNull(dst, e.Country)
	dst = append(dst, `,"city":`...)
	dst = appendOrNull(dst, e.City)
	dst = append(dst, `,"referrer":`...)
	dst = appendOrNull(dst, e.Referrer)
	dst = append(dst, `,"utm_source":`...)
	dst = appendOrNull(dst, e.UTMSource)
	dst = append(dst, `,"utm_medium":`...)
	dst = appendOrNull(dst, e.UTMMedium)
	dst = append(dst, `,"utm_campaign":`...)
	dst = appendOrNull(dst, e.UTMCampaign)
	return append(dst, '}')
}

// appendOrNull appends s as a JSON string, or null when it is empty.
func appendOrNull(dst []byte, s string) []byte {
	if s == "" {
		return append(dst, "null"...)
	}
	return appendString(dst, s)
}

const hexDigits = "0123456789abcdef"

// plain marks the bytes appendString copies as they are: ASCII but the
// control characters, ", \, <, > and &.
var plain = func() (t [256]bool) {
	for b := 0x20; b < utf8.RuneSelf; b++ {
		t[b] = b != '"' && b != '\\' && b != '<' && b != '>' && b != '&'
	}
	return t
}()

// appendString appends src as a JSON string exactly as json.Marshal
// writes it (encoding/json's appendString with escapeHTML): ", \ and the
// control characters escaped (\b \f \n \r \t by name), <, > and & as
// \u00XX, invalid UTF-8 as \ufffd, U+2028 and U+2029 as \u2028 and
// \u2029.
func appendString[S []byte | string](dst []byte, src S) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(src); {
		b := src[i]
		// Most bytes are plain: one table load each (a click's strings
		// are scanned whole, about 150 bytes a click).
		if plain[b] {
			i++
			continue
		}
		if b < utf8.RuneSelf {
			dst = append(dst, src[start:i]...)
			switch b {
			case '\\', '"':
				dst = append(dst, '\\', b)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[b>>4], hexDigits[b&0xF])
			}
			i++
			start = i
			continue
		}
		n := min(len(src)-i, utf8.UTFMax)
		r, size := utf8.DecodeRuneInString(string(src[i : i+n]))
		if r == utf8.RuneError && size == 1 {
			dst = append(dst, src[start:i]...)
			dst = append(dst, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			dst = append(dst, src[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[r&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	dst = append(dst, src[start:]...)
	return append(dst, '"')
}
