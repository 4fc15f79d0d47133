package capture

import (
	"context"
	"errors"
	"net/netip"
	"sync"
	"time"
	"unsafe"

	"github.com/go-logr/logr"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/kurz-dev/kurz/internal/analytics"
)

// Salts gives the consumer the visitor salts of the days it hashes clicks
// of (today's and tomorrow's, from the shared Secret). Generation changes
// whenever the salts do, so the consumer rebuilds its hashers only then.
type Salts interface {
	Salts() (generation uint64, salts []analytics.DaySalt)
}

// GeoIP gives a client address's country (ISO 3166-1 alpha-2) and city
// (its English name); geoip.DB is one. Lookup is called on the consumer's goroutine while the
// database may reload: it must be safe for that.
type GeoIP interface {
	Lookup(addr netip.Addr) (country, city string)
}

// Consumer takes the clicks the redirect put in the Ring, enriches them
// into Events (User-Agent class, visitor hash, referrer host, UTM of the
// destination after the visitor's query was merged, country, city) and hands each
// to its sinks, on one goroutine. It is one of the redirect server's click
// consumers (Replay, Run, Finish).
type Consumer struct {
	ring   *Ring
	o      Options
	salts  Salts
	store  *StoreWriter // nil: no store nor export, only sinks
	sinks  []analytics.Sink
	geo    GeoIP // nil: countries only from the trusted header
	uac    *analytics.UAClassifier
	ev     analytics.Event
	t      tables
	gen    uint64
	vis    *analytics.Visitors
	hasVis bool
	log    logr.Logger
	done   chan struct{}
	once   sync.Once
}

// New returns a consumer of ring's clicks writing to store (nil: none) and
// handing every event to sinks too.
func New(o Options, ring *Ring, salts Salts, store analytics.Writer, sinks ...analytics.Sink) (*Consumer, error) {
	var outs []Output
	if store != nil {
		outs = append(outs, Output{Name: StoreOutput, W: store})
	}
	return NewWithOutputs(o, ring, salts, outs, sinks...)
}

// NewWithOutputs returns a consumer of ring's clicks whose events are
// aggregated once and the batches written to every output (the store, an
// OTLP exporter), each with its own queue, and handed to sinks too.
func NewWithOutputs(o Options, ring *Ring, salts Salts, outs []Output, sinks ...analytics.Sink) (*Consumer, error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	if ring == nil || salts == nil {
		return nil, errors.New("analytics capture: a ring and a salt source are required")
	}
	RegisterMetrics()
	c := &Consumer{
		// The classifier only parses: the consumer caches classes itself
		// (tables.ua), with their names interned.
		ring: ring, o: o, salts: salts, uac: analytics.NewUAClassifier(1),
		t: newTables(), log: ctrl.Log.WithName("analytics"),
		done: make(chan struct{}),
	}
	if len(outs) > 0 {
		c.store = NewWriter(o, c.log, outs...)
		c.sinks = append(c.sinks, c.store)
	}
	c.sinks = append(c.sinks, sinks...)
	return c, nil
}

// Replay starts the store writer; analytics has nothing to take back from
// a previous process (what it did not write is lost, and was counted).
func (c *Consumer) Replay(ctx context.Context) error {
	c.log = ctrl.LoggerFrom(ctx).WithName("analytics")
	if c.store != nil {
		c.store.setLogger(c.log)
		c.store.Start()
	}
	return nil
}

// SetGeoIP makes the consumer look up the country and city of clicks the
// trusted country header did not give; call it before Run.
func (c *Consumer) SetGeoIP(g GeoIP) { c.geo = g }

// Run drains the ring every DrainInterval and flushes the sinks at the end
// of every FlushInterval (aligned: whole minutes) until ctx is done.
func (c *Consumer) Run(ctx context.Context) {
	drain := time.NewTicker(c.o.DrainInterval)
	defer drain.Stop()
	flush := time.NewTimer(untilFlush(time.Now(), c.o.FlushInterval))
	defer flush.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-drain.C:
			c.Drain()
		case <-flush.C:
			c.Drain()
			c.flush()
			flush.Reset(untilFlush(time.Now(), c.o.FlushInterval))
		}
	}
}

// untilFlush is the wait for the next flush: just after the end of the
// current FlushInterval-aligned period (a whole minute by default), so that
// a minute's identical clicks are summed into one row rather than split
// over batches: with a 5 s flush, 10 000 links clicked at random cost 0.75
// rows a click; aligned to the minute, a row per link and minute.
func untilFlush(now time.Time, every time.Duration) time.Duration {
	next := now.Truncate(every).Add(every)
	return next.Sub(now) + flushLag(every)
}

// flushLag lets clicks of the period's last moment reach the ring first.
func flushLag(every time.Duration) time.Duration { return min(every/30, 2*time.Second) }

// Finish takes the last clicks (the listener has drained), flushes and
// writes what is queued within ctx.
func (c *Consumer) Finish(ctx context.Context) error {
	defer c.once.Do(func() { close(c.done) })
	c.Drain()
	c.flush()
	if c.store != nil {
		return c.store.Stop(ctx)
	}
	return nil
}

// Done is closed once Finish returned: the store may be closed.
func (c *Consumer) Done() <-chan struct{} { return c.done }

// Drain enriches every click in the ring and hands it to the sinks. One
// goroutine only (Run's, or Finish's after Run returned).
func (c *Consumer) Drain() {
	c.refreshSalts()
	for c.ring.take(c.ring.Cap(), c.enrich) > 0 {
	}
}

func (c *Consumer) flush() {
	for _, s := range c.sinks {
		if f, ok := s.(analytics.Flusher); ok {
			f.Flush()
		}
	}
}

func (c *Consumer) refreshSalts() {
	gen, salts := c.salts.Salts()
	if c.hasVis && gen == c.gen {
		return
	}
	v, err := analytics.NewVisitors(salts...)
	if err != nil { // a bad Secret: visitors unknown until it is fixed
		c.log.Error(err, "analytics: visitor salts unusable, visitors are not counted")
		v, _ = analytics.NewVisitors()
	}
	c.vis, c.gen, c.hasVis = v, gen, true
}

// bytesString views b as a string for a call that does not keep it.
func bytesString(b []byte) string { return unsafe.String(unsafe.SliceData(b), len(b)) }

// enrich makes the click's Event and hands it to the sinks. A click of a
// known link from a known client builds and copies nothing: every string
// of the Event is one the tables hold (Event.Ident), found by a lookup.
func (c *Consumer) enrich(k *Click) {
	eventsTotal.Inc()
	ua := k.UA()
	li := c.t.link(k.Link)
	cls := c.t.ua(c.uac, ua)
	e := &c.ev
	*e = analytics.Event{
		Time: k.Time.UTC(), Link: li.ref, Ident: &li.ref, Memo: &li.memo, Clicks: 1,
		Device: cls.device, OS: cls.os, Browser: cls.browser,
	}
	if k.IP.IsValid() {
		e.Visitor = c.vis.Hash(k.Time, k.IP, ua)
	}
	if r := k.Referer(); len(r) > 0 {
		e.Referrer = c.t.referrer(r)
	}
	u := c.t.destUTM(li, k.Dest, k.DestUTM)
	if q := k.Query(); len(q) > 0 {
		u = c.t.internUTM(analytics.MergeUTM(bytesString(q), u))
	}
	e.UTMSource, e.UTMMedium, e.UTMCampaign = u.Source, u.Medium, u.Campaign
	// The trusted proxy's header wins over the file: it may know better
	// (its own, fresher database, or the client behind another proxy).
	if k.Country != [2]byte{} {
		e.Country = c.t.country(k.Country)
	}
	// The city only from the file, with the file's country: a header's
	// country with the file's city could name a city of another country.
	if e.Country == "" && c.geo != nil && k.IP.IsValid() {
		country, city := c.geo.Lookup(k.IP)
		e.Country = c.t.intern(analytics.NormalizeCountry(country))
		e.City = c.t.city(e.Country, city)
	}
	for _, s := range c.sinks {
		s.Clicked(e)
	}
}
