package analytics

import (
	"strings"
	"testing"
	"time"
)

func TestReferrerHost(t *testing.T) {
	long := "https://" + strings.Repeat("a", 300) + ".example/"
	for in, want := range map[string]string{
		"":                                     "",
		"https://www.Google.com/search?q=x":    "google.com",
		"https://t.co/abc":                     "t.co",
		"http://user:pw@Example.ORG:8080/p":    "example.org",
		"https://news.ycombinator.com.":        "news.ycombinator.com",
		"android-app://com.google.android.gm/": "com.google.android.gm",
		"https://[2001:db8::1]:443/x":          "2001:db8::1",
		"not a url":                            "",
		"/relative/path":                       "",
		"https://example.com#frag":             "example.com",
		"https://example.com?x=1":              "example.com",
		long:                                   strings.Repeat("a", MaxReferrerLen),
	} {
		if got := ReferrerHost(in); got != want {
			t.Errorf("ReferrerHost(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestMergeUTM(t *testing.T) {
	link := UTMOfURL("https://shop.example/p?utm_source=newsletter&utm_medium=email&x=1#top")
	if link != (UTM{Source: "newsletter", Medium: "email"}) {
		t.Fatalf("UTMOfURL = %+v", link)
	}
	for _, tc := range []struct {
		query string
		want  UTM
	}{
		{"", UTM{Source: "newsletter", Medium: "email"}},
		{"utm_source=twitter", UTM{Source: "twitter", Medium: "email"}},
		{"utm_campaign=spring%20sale&ref=x", UTM{Source: "newsletter", Medium: "email", Campaign: "spring sale"}},
		{"utm_source=", UTM{Medium: "email"}}, // the visitor's empty value wins, as in the redirect
		{"utm_source=a&utm_source=b", UTM{Source: "a", Medium: "email"}},
		{"%75tm_source=esc", UTM{Source: "esc", Medium: "email"}},
		{"utm_source=%zz", UTM{Source: "%zz", Medium: "email"}},
		{"utm_medium=" + strings.Repeat("m", 300), UTM{Source: "newsletter", Medium: strings.Repeat("m", MaxUTMLen)}},
	} {
		if got := MergeUTM(tc.query, link); got != tc.want {
			t.Errorf("MergeUTM(%q) = %+v, want %+v", tc.query, got, tc.want)
		}
	}
}

func TestNormalizeCountry(t *testing.T) {
	for in, want := range map[string]string{"DE": "DE", "de": "DE", "xx": "", "T1": "", "D": "", "DEU": "", "1A": "", "": ""} {
		if got := NormalizeCountry(in); got != want {
			t.Errorf("NormalizeCountry(%q) = %q, want %q", in, got, want)
		}
	}
}

// A city is its country and name (two cities share a name), "" when
// either is unknown or the name is one the API's comma-separated filter
// could not take; a key passes Validate with its country.
func TestCityKey(t *testing.T) {
	for _, c := range []struct{ country, name, want string }{
		{"DE", "Berlin", "DE/Berlin"},
		{"US", "Paris", "US/Paris"},
		{"CR", "San José", "CR/San José"},
		{"", "Berlin", ""},
		{"de", "Berlin", ""},
		{"DE", "", ""},
		{"US", "Washington, D.C.", ""},
		{"DE", "Ber\nlin", ""},
		{"DE", "Ber\x00lin", ""},
		{"DE", "\xff", ""},
		{"DE", strings.Repeat("x", MaxCityLen-3), "DE/" + strings.Repeat("x", MaxCityLen-3)},
		{"DE", strings.Repeat("x", MaxCityLen-2), ""},
	} {
		got := CityKey(c.country, c.name)
		if got != c.want {
			t.Errorf("CityKey(%q, %q) = %q, want %q", c.country, c.name, got, c.want)
		}
		if got != "" {
			e := Event{Time: time.Unix(1e9, 0), Link: LinkRef{UID: "u", Namespace: "ns"}, Clicks: 1, Country: c.country, City: got}
			if err := e.Validate(); err != nil {
				t.Errorf("CityKey(%q, %q): %v", c.country, c.name, err)
			}
		}
	}
}

func TestAggregator(t *testing.T) {
	t0 := time.Date(2025, 5, 1, 10, 0, 5, 0, time.UTC)
	l := LinkRef{UID: "u", Namespace: "ns"}
	a := NewAggregator(4)
	a.Add(Event{Time: t0, Link: l, Visitor: 1, Country: "DE"})
	a.Add(Event{Time: t0.Add(50 * time.Second), Link: l, Visitor: 1, Country: "DE"}) // same minute
	a.Add(Event{Time: t0.Add(time.Minute), Link: l, Visitor: 1, Country: "DE"})      // next minute
	a.Add(Event{Time: t0, Link: l, Visitor: 2, Country: "DE", Clicks: 3})            // another visitor
	a.Add(Event{Time: t0, Link: l, Visitor: 1, Country: "FR"})                       // another dimension
	if a.Len() != 4 || a.Clicks() != 7 {
		t.Fatalf("Len %d Clicks %d, want 4 and 7", a.Len(), a.Clicks())
	}
	b := a.Take("w-1")
	if b.ID != "w-1" || len(b.Events) != 4 || b.Events[0].Clicks != 2 || !b.Events[0].Time.Equal(t0.Truncate(time.Minute)) {
		t.Fatalf("batch %+v", b)
	}
	if err := b.Validate(); err != nil {
		t.Fatal(err)
	}
	if a.Len() != 0 || a.Clicks() != 0 {
		t.Fatalf("Take left %d events", a.Len())
	}
	a.Add(Event{Time: t0, Link: l})
	if len(b.Events) != 4 {
		t.Fatal("the taken batch shares the aggregator's storage")
	}
}

func TestBatchValidate(t *testing.T) {
	ok := Event{Time: time.Unix(1e9, 0), Link: LinkRef{UID: "u", Namespace: "ns"}, Clicks: 1}
	for name, mut := range map[string]func(e *Event){
		"time":                     func(e *Event) { e.Time = time.Time{} },
		"uid":                      func(e *Event) { e.Link.UID = "" },
		"namespace":                func(e *Event) { e.Link.Namespace = "" },
		"device":                   func(e *Event) { e.Device = 9 },
		"clicks":                   func(e *Event) { e.Clicks = 0 },
		"country":                  func(e *Event) { e.Country = "de" },
		"referrer":                 func(e *Event) { e.Referrer = strings.Repeat("r", MaxReferrerLen+1) },
		"utm":                      func(e *Event) { e.UTMCampaign = strings.Repeat("c", MaxUTMLen+1) },
		"city without its country": func(e *Event) { e.City = "Berlin" },
		"city of another country":  func(e *Event) { e.Country, e.City = "FR", "DE/Berlin" },
		"city without a country":   func(e *Event) { e.City = "DE/Berlin" },
		"city without a name":      func(e *Event) { e.Country, e.City = "DE", "DE/" },
		"city with a comma":        func(e *Event) { e.Country, e.City = "US", "US/Washington, D.C." },
		"city too long":            func(e *Event) { e.Country, e.City = "DE", "DE/"+strings.Repeat("x", MaxCityLen) },
	} {
		e := ok
		mut(&e)
		b := Batch{ID: "w-1", Events: []Event{ok, e}}
		if err := b.Validate(); err == nil {
			t.Errorf("%s: a bad event passed", name)
		}
	}
	if err := (&Batch{Events: []Event{ok}}).Validate(); err == nil {
		t.Error("a batch without id passed")
	}
}

// Interned events (Ident) are summed exactly as by value: the same values
// under other addresses (a producer that started its tables over, or an
// event without Ident) find the same row; other values do not.
func TestAggregatorIdent(t *testing.T) {
	t0 := time.Date(2025, 5, 1, 10, 0, 5, 0, time.UTC)
	copyOf := func(s string) string { return string([]byte(s)) }
	ref1 := &LinkRef{UID: "u", Namespace: "ns"}
	ref2 := &LinkRef{UID: "u", Namespace: "ns"} // equal, another address
	de1, de2 := copyOf("DE"), copyOf("DE")
	a := NewAggregator(4)
	a.Add(Event{Time: t0, Link: *ref1, Ident: ref1, Visitor: 1, Country: de1})
	a.Add(Event{Time: t0, Link: *ref1, Ident: ref1, Visitor: 1, Country: de1}) // by address
	a.Add(Event{Time: t0, Link: *ref2, Ident: ref2, Visitor: 1, Country: de2}) // by value
	a.Add(Event{Time: t0, Link: *ref1, Visitor: 1, Country: "DE"})             // no Ident
	a.Add(Event{Time: t0, Link: *ref1, Ident: ref1, Visitor: 1, Country: copyOf("FR")})
	a.Add(Event{Time: t0, Link: *ref1, Ident: ref1, Visitor: 2, Country: de1})
	b := a.Take("w-1")
	if len(b.Events) != 3 || b.Events[0].Clicks != 4 || b.Events[1].Clicks != 1 || b.Events[2].Clicks != 1 {
		t.Fatalf("batch %+v, want 4 clicks of DE, 1 of FR, 1 of visitor 2", b.Events)
	}
	for _, e := range b.Events {
		if e.Ident != nil {
			t.Fatal("a batch's event carries the producer's pointer")
		}
	}
}

// A memo (Event.Memo) counts a link's repeated event without a map access,
// and only that event: another visitor or minute under the same memo, a
// memo of an earlier batch, or one of another aggregator finds its own row.
func TestAggregatorMemo(t *testing.T) {
	t0 := time.Date(2025, 5, 1, 10, 0, 5, 0, time.UTC)
	ref := &LinkRef{UID: "u", Namespace: "ns"}
	var memo AggMemo
	ev := func(visitor uint64, at time.Time) Event {
		return Event{Time: at, Link: *ref, Ident: ref, Memo: &memo, Visitor: visitor}
	}
	a, other := NewAggregator(4), NewAggregator(4)
	a.Add(ev(1, t0))
	a.Add(ev(1, t0.Add(time.Second))) // the memo's row
	a.Add(ev(2, t0))                  // another visitor: the memo moves
	a.Add(ev(1, t0))                  // back to visitor 1, by the ident map
	a.Add(ev(2, t0.Add(time.Minute))) // another minute
	other.Add(ev(2, t0.Add(time.Minute)))
	a.Add(ev(2, t0.Add(time.Minute))) // the memo names other's row
	b := a.Take("w-1")
	want := []int64{3, 1, 2}
	if len(b.Events) != len(want) {
		t.Fatalf("batch %+v, want rows of %v clicks", b.Events, want)
	}
	for i, e := range b.Events {
		if e.Clicks != want[i] {
			t.Errorf("row %d: %d clicks, want %d", i, e.Clicks, want[i])
		}
		if e.Memo != nil || e.Ident != nil {
			t.Errorf("row %d carries the producer's pointers", i)
		}
	}
	a.Add(ev(2, t0.Add(time.Minute))) // the memo is of the last batch
	a.Add(ev(3, t0))
	if b := a.Take("w-2"); len(b.Events) != 2 || b.Events[0].Clicks != 1 || b.Events[0].Visitor != 2 {
		t.Fatalf("after a Take: %+v", b.Events)
	}
}
