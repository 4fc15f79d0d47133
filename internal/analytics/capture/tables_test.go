package capture

import (
	"context"
	"fmt"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"
	"unsafe"

	"github.com/go-logr/logr"
	. "github.com/onsi/gomega"

	"github.com/kurz-dev/kurz/internal/analytics"
)

// batchRecorder keeps the batches a store would get.
type batchRecorder struct {
	mu      sync.Mutex
	batches []analytics.Batch
}

func (r *batchRecorder) Write(_ context.Context, b analytics.Batch) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.batches = append(r.batches, b)
	return nil
}
func (r *batchRecorder) Close() error { return nil }

func (r *batchRecorder) events() []analytics.Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []analytics.Event
	for _, b := range r.batches {
		out = append(out, b.Events...)
	}
	return out
}

// targetedLink sends iPhones elsewhere, as a redirect Entry with an iOS
// target does: its clicks have two destinations with their own UTM values.
type targetedLink struct{ ref analytics.LinkRef }

func (l *targetedLink) AnalyticsRef() analytics.LinkRef { return l.ref }
func (l *targetedLink) chooseDest(ua []byte) (string, string) {
	if strings.Contains(string(ua), "iPhone") {
		return "https://apps.example/app?utm_source=app-store", ""
	}
	return "https://shop.example/sale", "?utm_source=newsletter&utm_campaign=spring"
}

func newRecordingConsumer(t *testing.T, now time.Time) (*Consumer, *Ring, *batchRecorder) {
	t.Helper()
	ring := NewRing(64)
	w := &batchRecorder{}
	c, err := New(testOptions(), ring, fixedSalts{[]analytics.DaySalt{{Day: now, Salt: analytics.NewSalt()}}}, w)
	if err != nil {
		t.Fatal(err)
	}
	c.store.log = logr.Discard()
	if err := c.Replay(context.Background()); err != nil {
		t.Fatal(err)
	}
	return c, ring, w
}

// Each destination of a link has its own UTM values (the consumer keeps
// them per link and destination), and the visitor's query still wins.
func TestConsumerUTMPerDestination(t *testing.T) {
	g := NewWithT(t)
	now := time.Now().UTC().Truncate(time.Minute)
	c, ring, _ := newRecordingConsumer(t, now)
	rec := &recorder{}
	c.sinks = append(c.sinks, rec)
	l := &targetedLink{ref: analytics.LinkRef{UID: "u", Namespace: "ns"}}
	for range 2 {
		put(ring, l, now, "192.0.2.1", desktopUA, "", "", "")
		put(ring, l, now, "192.0.2.2", phoneUA, "", "", "")
		put(ring, l, now, "192.0.2.3", desktopUA, "", "utm_campaign=autumn", "")
	}
	c.Drain()
	g.Expect(c.Finish(context.Background())).To(Succeed())
	g.Expect(rec.events).To(HaveLen(6))
	for i := 0; i < 6; i += 3 {
		utm := func(e analytics.Event) [3]string { return [3]string{e.UTMSource, e.UTMMedium, e.UTMCampaign} }
		g.Expect(utm(rec.events[i])).To(Equal([3]string{"newsletter", "", "spring"}))
		g.Expect(utm(rec.events[i+1])).To(Equal([3]string{"app-store", "", ""}))
		g.Expect(utm(rec.events[i+2])).To(Equal([3]string{"newsletter", "", "autumn"}))
	}
}

// The tables start over when one is full (here: more distinct referrers
// than internMax) while the minute's clicks are being summed: the clicks
// of one link, client and referrer before and after are still one row with
// their count, since the aggregator finds a row by value when the
// addresses are new.
func TestConsumerTablesStartOverMidMinute(t *testing.T) {
	g := NewWithT(t)
	now := time.Now().UTC().Truncate(time.Minute)
	c, ring, w := newRecordingConsumer(t, now)
	l := &testLink{ref: analytics.LinkRef{UID: "u", Namespace: "ns"}, dest: "https://shop.example/?utm_source=a"}
	other := &testLink{ref: analytics.LinkRef{UID: "flood", Namespace: "ns"}, dest: "https://shop.example/"}
	click := func(link chooser, ref string) {
		for !put(ring, link, now, "192.0.2.1", desktopUA, ref, "", "DE") {
			c.Drain()
		}
	}
	click(l, "https://news.example/a")
	c.Drain()
	first := c.ev.Referrer
	for i := range internMax + 10 {
		click(other, fmt.Sprintf("https://r%d.example/", i))
	}
	click(l, "https://news.example/b")
	c.Drain()
	g.Expect(c.ev.Referrer).To(Equal("news.example"))
	g.Expect(c.ev.Referrer == first && strPtr(c.ev.Referrer) != strPtr(first)).To(BeTrue(),
		"the tables started over: the same referrer is another copy")
	g.Expect(c.Finish(context.Background())).To(Succeed())
	var mine []analytics.Event
	for _, e := range w.events() {
		if e.Link.UID == "u" {
			mine = append(mine, e)
		}
	}
	g.Expect(mine).To(HaveLen(1), "one row for the two identical clicks")
	g.Expect(mine[0].Clicks).To(BeEquivalentTo(2))
	g.Expect(mine[0].Ident).To(BeNil(), "a batch's events carry no producer pointers")
	g.Expect(mine[0].Country).To(Equal("DE"))
	g.Expect(mine[0].UTMSource).To(Equal("a"))
}

// A click of a known link from a known client allocates nothing on the
// consumer's goroutine: enrichment and aggregation are lookups.
func TestConsumerClickAllocatesNothing(t *testing.T) {
	g := NewWithT(t)
	now := time.Now().UTC()
	c, ring, _ := newRecordingConsumer(t, now)
	l := &testLink{ref: analytics.LinkRef{UID: "u", Namespace: "ns"}, dest: "https://shop.example/?utm_source=a"}
	ip := netip.MustParseAddr("192.0.2.1")
	ua, ref, q, country := []byte(desktopUA), []byte("https://news.example/today"), []byte("utm_medium=qr"), []byte("de")
	click := func() { // put, without its conversions
		k, v, _ := ring.Reserve()
		k.Time, k.Link, k.IP = now, l, ip
		k.Dest, k.DestUTM = l.dest, ""
		k.SetText(ua, ref, q)
		k.SetCountry(country)
		ring.Commit(v)
		c.Drain()
	}
	click() // the first click fills the tables and starts the row
	g.Expect(testing.AllocsPerRun(100, click)).To(BeZero())
	g.Expect(c.store.agg.Len()).To(Equal(1))
	g.Expect(c.store.agg.Clicks()).To(BeEquivalentTo(102))
}

func strPtr(s string) *byte { return unsafe.StringData(s) }

// The Referer cache keeps its own copy of a header: the ring's slot it
// came from is reused for other clicks' headers.
func TestTablesReferrerCache(t *testing.T) {
	tb := newTables()
	slot := []byte("https://News.Example.com/today?x=1")
	if got := tb.referrer(slot); got != "news.example.com" {
		t.Fatalf("referrer %q", got)
	}
	copy(slot, "https://blog.example.org/x?y=22222")
	if got := tb.referrer(slot); got != "blog.example.org" {
		t.Fatalf("a reused slot's Referer gave %q", got)
	}
	if got := tb.referrer([]byte("https://News.Example.com/today?x=1")); got != "news.example.com" {
		t.Fatalf("the first Referer again gave %q", got)
	}
	for i := range refCacheMax + 1 {
		tb.referrer(fmt.Appendf(nil, "https://h%d.example/", i))
	}
	if len(tb.refs) > refCacheMax {
		t.Errorf("%d Referers cached, the bound is %d", len(tb.refs), refCacheMax)
	}
	if n := testing.AllocsPerRun(100, func() { tb.referrer(slot) }); n != 0 {
		t.Errorf("a cached Referer allocates %v times", n)
	}
}

// The link table keys a Link by the pointer it is: the same Link finds its
// record, another Link (even one naming the same link) gets its own.
func TestLinkTableKeysByPointer(t *testing.T) {
	g := NewWithT(t)
	tb := newTables()
	ref := analytics.LinkRef{UID: "u", Namespace: "ns", Name: "l"}
	a, b := &testLink{ref: ref}, &testLink{ref: ref}
	li := tb.link(a)
	g.Expect(li.ref).To(Equal(ref))
	g.Expect(tb.link(a)).To(BeIdenticalTo(li))
	g.Expect(tb.link(b)).NotTo(BeIdenticalTo(li))
	g.Expect(tb.links).To(HaveLen(2))
}
