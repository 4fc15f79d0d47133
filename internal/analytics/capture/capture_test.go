package capture

import (
	"context"
	"fmt"
	"net/netip"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-logr/logr"
	. "github.com/onsi/gomega"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/kurz-dev/kurz/internal/analytics"
	"github.com/kurz-dev/kurz/internal/analytics/sqlite"
)

// testLink is a link for the consumer, as the redirect's Entry is.
type testLink struct {
	ref  analytics.LinkRef
	dest string
}

func (l *testLink) AnalyticsRef() analytics.LinkRef    { return l.ref }
func (l *testLink) chooseDest([]byte) (string, string) { return l.dest, "" }

// chooser is a test link that picks its destination as the redirect's
// Entry does, by User-Agent; put records the choice in the slot as the
// redirect's handler does.
type chooser interface {
	Link
	chooseDest(ua []byte) (dest, utm string)
}

type fixedSalts struct{ salts []analytics.DaySalt }

func (f fixedSalts) Salts() (uint64, []analytics.DaySalt) { return 1, f.salts }

func put(r *Ring, l chooser, t time.Time, ip, ua, ref, query, country string) bool {
	c, v, ok := r.Reserve()
	if !ok {
		return false
	}
	c.Time, c.Link, c.IP = t, l, netip.MustParseAddr(ip)
	c.Dest, c.DestUTM = l.chooseDest([]byte(ua))
	c.SetText([]byte(ua), []byte(ref), []byte(query))
	c.SetCountry([]byte(country))
	r.Commit(v)
	return true
}

// Producers racing for slots while the consumer takes them: every click is
// taken whole or counted as dropped, none twice, none torn.
func TestRingConcurrentProducers(t *testing.T) {
	g := NewWithT(t)
	r := NewRing(64)
	const producers, each = 4, 5000
	links := make([]*testLink, producers)
	for i := range links {
		links[i] = &testLink{ref: analytics.LinkRef{UID: fmt.Sprint(i)}}
	}
	var wg sync.WaitGroup
	var put0 [producers]int
	for p := range producers {
		wg.Go(func() {
			for i := range each {
				ua := fmt.Sprintf("p%d-%d", p, i)
				if put(r, links[p], time.Unix(int64(i), 0), "192.0.2.1", ua, ua, ua, "DE") {
					put0[p]++
				}
			}
		})
	}
	taken := map[string]bool{}
	check := func(c *Click) {
		ua := string(c.UA())
		g.Expect(string(c.Referer())).To(Equal(ua), "a slot is whole")
		g.Expect(string(c.Query())).To(Equal(ua))
		g.Expect(ua).To(HavePrefix("p" + c.Link.(*testLink).ref.UID + "-"))
		g.Expect(taken[ua]).To(BeFalse(), "taken once")
		taken[ua] = true
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	for running := true; running; {
		select {
		case <-done:
			running = false
		default:
		}
		r.take(r.Cap(), check)
	}
	r.take(r.Cap(), check)
	total := 0
	for _, n := range put0 {
		total += n
	}
	g.Expect(taken).To(HaveLen(total))
	g.Expect(int(r.Dropped())).To(Equal(producers*each - total))
}

func testStore(t *testing.T) *sqlite.Store {
	o := sqlite.DefaultOptions()
	o.Path = filepath.Join(t.TempDir(), "analytics.db")
	s, err := sqlite.Open(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

func testOptions() Options {
	o := DefaultOptions()
	o.WriterID = "test"
	o.RingSize = 64
	o.WriteTimeout = time.Second
	o.WriteAttempts = 2
	return o
}

const (
	desktopUA = "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36"
	phoneUA   = "Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.0 Mobile/15E148 Safari/604.1"
	botUA     = "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)"
)

// recorder is a second sink, as webhooks' dispatcher is.
type recorder struct{ events []analytics.Event }

func (r *recorder) Clicked(e *analytics.Event) { r.events = append(r.events, *e) }

// Clicks through the ring come out of the store enriched: device classes,
// referrer hosts, the UTM values of the destination with the visitor's
// query merged, the country header, distinct visitors; every sink sees each.
func TestConsumerEnrichesAndStores(t *testing.T) {
	g := NewWithT(t)
	store := testStore(t)
	now := time.Now().UTC().Truncate(time.Minute)
	ring := NewRing(64)
	rec := &recorder{}
	c, err := New(testOptions(), ring, fixedSalts{[]analytics.DaySalt{{Day: now, Salt: analytics.NewSalt()}}}, store, rec)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(c.Replay(context.Background())).To(Succeed())
	link := &testLink{
		ref:  analytics.LinkRef{UID: "u1", Namespace: "team", Name: "spring", Domain: "go.test", Key: "spring"},
		dest: "https://shop.example/sale?utm_source=newsletter&utm_medium=email",
	}
	put(ring, link, now, "192.0.2.1", desktopUA, "https://www.Example.com/post", "", "de")
	put(ring, link, now, "192.0.2.1", desktopUA, "https://www.Example.com/post", "", "de")
	put(ring, link, now, "192.0.2.2", phoneUA, "", "utm_source=qr&x=1", "FR")
	put(ring, link, now, "192.0.2.3", botUA, "", "", "")
	c.Drain()
	g.Expect(rec.events).To(HaveLen(4))
	g.Expect(rec.events[2].UTMSource).To(Equal("qr"), "the visitor's utm_source wins")
	g.Expect(rec.events[2].UTMMedium).To(Equal("email"), "the link's stays")
	g.Expect(c.Finish(context.Background())).To(Succeed())

	query := func(by analytics.GroupBy, bots bool) map[string][2]int64 {
		res, err := store.Query(context.Background(), analytics.Query{
			Namespace: "team", Start: now.Add(-time.Hour), End: now.Add(time.Hour), Granularity: analytics.Hour,
			GroupBy: by, ExcludeBots: !bots, Limit: 10,
		})
		g.Expect(err).NotTo(HaveOccurred())
		out := map[string][2]int64{}
		for _, r := range res.Rows {
			out[r.Key] = [2]int64{r.Clicks, r.Visitors}
		}
		return out
	}
	g.Expect(query(analytics.GroupByDevice, true)).To(Equal(map[string][2]int64{"desktop": {2, 1}, "mobile": {1, 1}, "bot": {1, 1}}))
	g.Expect(query(analytics.GroupByDevice, false)).To(Equal(map[string][2]int64{"desktop": {2, 1}, "mobile": {1, 1}}))
	g.Expect(query(analytics.GroupByReferrer, false)).To(Equal(map[string][2]int64{"example.com": {2, 1}, "": {1, 1}}))
	g.Expect(query(analytics.GroupByCountry, false)).To(Equal(map[string][2]int64{"DE": {2, 1}, "FR": {1, 1}}))
	g.Expect(query(analytics.GroupByUTMSource, false)).To(Equal(map[string][2]int64{"newsletter": {2, 1}, "qr": {1, 1}}))
	g.Expect(query(analytics.GroupByLink, true)).To(Equal(map[string][2]int64{"u1": {4, 3}}))
}

// failingWriter is a store that refuses every write, as a full disk does.
type failingWriter struct{ calls int }

func (f *failingWriter) Write(context.Context, analytics.Batch) error {
	f.calls++
	return fmt.Errorf("disk full")
}
func (f *failingWriter) Close() error { return nil }

// A failing store costs the clicks' analytics, counted, after the bounded
// attempts; the consumer keeps taking clicks meanwhile.
func TestFailingStoreDropsAndCounts(t *testing.T) {
	g := NewWithT(t)
	RegisterMetrics()
	before := testutil.ToFloat64(droppedTotal.WithLabelValues(dropStoreFailed))
	o := testOptions()
	ring := NewRing(64)
	w := &failingWriter{}
	c, err := New(o, ring, fixedSalts{}, w)
	g.Expect(err).NotTo(HaveOccurred())
	c.store.log = logr.Discard()
	g.Expect(c.Replay(context.Background())).To(Succeed())
	link := &testLink{ref: analytics.LinkRef{UID: "u", Namespace: "ns"}, dest: "https://x.example/"}
	for range 10 {
		g.Expect(put(ring, link, time.Now(), "192.0.2.1", desktopUA, "", "", "")).To(BeTrue())
	}
	c.Drain()
	g.Expect(ring.Len()).To(BeZero())
	g.Expect(c.Finish(context.Background())).To(Succeed())
	g.Expect(w.calls).To(Equal(o.WriteAttempts), "the batch is tried, with its id, a bounded number of times")
	g.Expect(testutil.ToFloat64(droppedTotal.WithLabelValues(dropStoreFailed)) - before).To(Equal(10.0))
}

// A store that takes no batch while clicks keep coming: the queue holds
// QueueBatches, the rest are dropped and counted; nothing blocks.
func TestSlowStoreQueueIsBounded(t *testing.T) {
	g := NewWithT(t)
	RegisterMetrics()
	before := testutil.ToFloat64(queueFull)
	o := testOptions()
	o.QueueBatches = 2
	w := &blockingWriter{release: make(chan struct{})}
	c, err := New(o, NewRing(64), fixedSalts{}, w)
	g.Expect(err).NotTo(HaveOccurred())
	c.store.log = logr.Discard()
	g.Expect(c.Replay(context.Background())).To(Succeed())
	link := &testLink{ref: analytics.LinkRef{UID: "u", Namespace: "ns"}, dest: "https://x.example/"}
	ev := analytics.Event{Time: time.Now(), Link: link.ref}
	for range 6 { // one in flight, two queued, the rest dropped
		c.store.Clicked(&ev)
		c.store.Flush()
		g.Eventually(w.started.Load).Should(BeTrue())
	}
	g.Expect(testutil.ToFloat64(queueFull) - before).To(Equal(3.0))
	close(w.release)
	g.Expect(c.Finish(context.Background())).To(Succeed())
}

type blockingWriter struct {
	started atomic.Bool
	release chan struct{}
}

func (b *blockingWriter) Write(ctx context.Context, _ analytics.Batch) error {
	b.started.Store(true)
	select {
	case <-b.release:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
func (b *blockingWriter) Close() error { return nil }

// A click's User-Agent, Referer and query share one array, each truncated
// to its own bound and read back apart; a slot is whole cache lines.
func TestClickText(t *testing.T) {
	g := NewWithT(t)
	g.Expect(SlotBytes % 64).To(BeZero())
	long := func(c byte, n int) []byte { return []byte(strings.Repeat(string(c), n)) }
	var c Click
	c.SetText(long('u', MaxUA+10), long('r', MaxReferer+10), long('q', MaxQuery+10))
	g.Expect(c.UA()).To(Equal(long('u', MaxUA)))
	g.Expect(c.Referer()).To(Equal(long('r', MaxReferer)))
	g.Expect(c.Query()).To(Equal(long('q', MaxQuery)))
	c.SetText([]byte("ua"), nil, []byte("utm_source=x"))
	g.Expect(string(c.UA())).To(Equal("ua"))
	g.Expect(c.Referer()).To(BeEmpty())
	g.Expect(string(c.Query())).To(Equal("utm_source=x"))
}
