package webhooks

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	kurzv1alpha1 "github.com/kurz-dev/kurz/api/v1alpha1"
	"github.com/kurz-dev/kurz/internal/analytics"
)

// clicksBody is the link.clicked body of batch, written as the batcher
// writes it (head, the clicks separated by commas, tail).
func clicksBody(batch []analytics.Event) []byte {
	var c clickEncoder
	b := c.clicksHead(nil, &batch[0])
	for i := range batch {
		if i > 0 {
			b = append(b, ',')
		}
		b = c.appendClick(b, &batch[i])
	}
	return append(b, clicksTail...)
}

// The payload as encoding/json wrote it before clickjson.go: the
// reference the hand-written encoding must equal byte for byte.

type refClicksData struct {
	Clicks []refClickView `json:"clicks"`
}

type refClickView struct {
	Timestamp   string       `json:"timestamp"`
	Count       int64        `json:"count"`
	Link        refClickLink `json:"link"`
	Device      string       `json:"device"`
	OS          *string      `json:"os"`
	Browser     *string      `json:"browser"`
	Country     *string      `json:"country"`
	City        *string      `json:"city"`
	Referrer    *string      `json:"referrer"`
	UTMSource   *string      `json:"utm_source"`
	UTMMedium   *string      `json:"utm_medium"`
	UTMCampaign *string      `json:"utm_campaign"`
}

type refClickLink struct {
	ID     string `json:"id"`
	Domain string `json:"domain"`
	Key    string `json:"key"`
	Link   string `json:"link"`
}

func refOrNull(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func refClicksBody(t testing.TB, batch []analytics.Event) []byte {
	t.Helper()
	views := make([]refClickView, len(batch))
	for i := range batch {
		e := &batch[i]
		views[i] = refClickView{
			Timestamp: formatTime(e.Time),
			Count:     max(e.Clicks, 1),
			Link: refClickLink{
				ID: e.Link.UID, Domain: e.Link.Domain, Key: e.Link.Key,
				Link: "https://" + e.Link.Domain + "/" + e.Link.Key,
			},
			Device: e.Device.String(), OS: refOrNull(e.OS), Browser: refOrNull(e.Browser), Country: refOrNull(e.Country),
			City:      refOrNull(e.City),
			Referrer:  refOrNull(e.Referrer),
			UTMSource: refOrNull(e.UTMSource), UTMMedium: refOrNull(e.UTMMedium), UTMCampaign: refOrNull(e.UTMCampaign),
		}
	}
	b, err := json.Marshal(envelope{
		Type: kurzv1alpha1.EventLinkClicked, Timestamp: formatTime(batch[0].Time),
		Version: PayloadVersion, Data: refClicksData{Clicks: views},
	})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestClickJSONMatchesEncodingJSON: the hand-written link.clicked body is
// byte for byte what encoding/json writes, for batches of one and many
// clicks with every dimension known, unknown or odd: quotes, backslashes,
// control characters, HTML's <>&, non-ASCII letters and emoji, U+2028 and
// U+2029, invalid UTF-8 (alone and split across the short URL's joins),
// DEL, counts of 0 (written as 1) and large ones, an unnamed device, and
// times in other zones, at whole seconds and nanoseconds, before 1970 and
// after 9999.
func TestClickJSONMatchesEncodingJSON(t *testing.T) {
	base := time.Date(2026, 11, 26, 9, 30, 0, 123456789, time.UTC)
	odd := []string{
		"", "plain", `quo"te`, `back\slash`, "tab\there", "nl\ncr\r", "bell\x07\x00\x1f", "\b\f",
		"<script>&amp;</script>", "Zürich", "東京", "🎉 party", "line\u2028para\u2029", "bad\xffutf8", "\xe2\x80", "del\x7f",
		"trunc\xf0\x9f\x8e", "é", "\u2027\u202a", "\ufffd", strings.Repeat("long-", 60),
	}
	zone := time.FixedZone("UTC+5:30", 5*3600+1800)
	var batch []analytics.Event
	for i, s := range odd {
		batch = append(batch, analytics.Event{
			Time: base.Add(time.Duration(i) * 1234567 * time.Microsecond),
			Link: analytics.LinkRef{UID: "uid-" + s, Namespace: "team", Name: "l", Domain: "go.example.com" + s, Key: s + "key"},
			// Visitor is never written.
			Visitor: 42, Device: analytics.Device(i % 7), OS: s, Browser: odd[(i+1)%len(odd)], Country: odd[(i+2)%len(odd)], City: odd[(i+3)%len(odd)],
			Referrer: odd[(i+3)%len(odd)], UTMSource: odd[(i+4)%len(odd)], UTMMedium: odd[(i+5)%len(odd)],
			UTMCampaign: odd[(i+6)%len(odd)], Clicks: int64(i*7919) - 3,
		})
	}
	batch = append(batch,
		analytics.Event{Time: base.In(zone), Link: analytics.LinkRef{Domain: "a.b\xe2", Key: "\x80\x94c"}, Clicks: 1},
		analytics.Event{Time: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), Clicks: 1 << 62},
		analytics.Event{Time: time.Date(1969, 12, 31, 23, 59, 59, 999999999, time.UTC), Device: analytics.DeviceBot},
		analytics.Event{Time: time.Date(12345, 6, 7, 8, 9, 10, 11000, time.UTC)},
		analytics.Event{Time: time.Now()}, // with a monotonic reading and the local zone
	)
	for _, c := range []struct {
		name  string
		batch []analytics.Event
	}{{"one click", batch[:1]}, {"one odd click", batch[7:8]}, {"every click", batch}, {"a full batch", benchClicks(fullBatch())}} {
		t.Run(c.name, func(t *testing.T) {
			want, got := refClicksBody(t, c.batch), clicksBody(c.batch)
			if !bytes.Equal(got, want) {
				t.Fatalf("the hand-written body differs from encoding/json's\n got: %s\nwant: %s", got, want)
			}
		})
	}
	// A reused encoder (its timestamp and URL scratch) writes the same.
	var enc clickEncoder
	for i := range batch {
		want := refClicksBody(t, batch[i:i+1])
		got := append(enc.appendClick(enc.clicksHead(nil, &batch[i]), &batch[i]), clicksTail...)
		if !bytes.Equal(got, want) {
			t.Fatalf("click %d from a reused encoder differs\n got: %s\nwant: %s", i, got, want)
		}
	}
}

// FuzzClickJSON compares the hand-written body with encoding/json's for
// arbitrary strings, counts and times (go test -fuzz FuzzClickJSON).
func FuzzClickJSON(f *testing.F) {
	f.Add("go.example.com", "docs", "iOS", "news.example.com", "spring<&>", int64(1), int64(1764149400123456789))
	f.Add("a\xe2", "\x80\x94", "\u2028", "\x00\x1f\"\\", "🎉", int64(-5), int64(-1))
	f.Fuzz(func(t *testing.T, domain, key, os, referrer, utm string, clicks, nanos int64) {
		e := analytics.Event{
			Time: time.Unix(0, nanos), Link: analytics.LinkRef{UID: key + domain, Domain: domain, Key: key},
			Device: analytics.Device(uint8(clicks)), OS: os, Browser: referrer, Country: utm, City: os, Referrer: referrer,
			UTMSource: utm, UTMMedium: os, UTMCampaign: domain, Clicks: clicks,
		}
		batch := []analytics.Event{e, e}
		if want, got := refClicksBody(t, batch), clicksBody(batch); !bytes.Equal(got, want) {
			t.Fatalf("differs\n got: %q\nwant: %q", got, want)
		}
	})
}

// TestAppendStringEscapes: the escapes appendString writes, read back by
// encoding/json as the same string (valid UTF-8 in) or with U+FFFD for
// each invalid byte.
func TestAppendStringEscapes(t *testing.T) {
	for in, want := range map[string]string{
		"a<b>&c":     `"a\u003cb\u003e\u0026c"`,
		"q\"b\\":     `"q\"b\\"`,
		"\x00\x1f\t": `"\u0000\u001f\t"`,
		"x\u2028y":   `"x\u2028y"`,
		"\xff":       `"\ufffd"`,
		"Zürich 🎉":   `"Zürich 🎉"`,
		"":           `""`,
		"\x7fdel/ok": "\"\x7fdel/ok\"",
	} {
		got := appendString(nil, in)
		if string(got) != want {
			t.Errorf("appendString(%q) = %s, want %s", in, got, want)
		}
		var back string
		if err := json.Unmarshal(got, &back); err != nil {
			t.Fatalf("%s does not parse: %v", got, err)
		}
		if utf8.ValidString(in) && back != in {
			t.Errorf("%s reads back as %q, want %q", got, back, in)
		}
	}
}
