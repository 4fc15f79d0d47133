package wiring

import (
	"context"
	"sync"
	"sync/atomic"

	"github.com/kurz-dev/kurz/internal/analytics"
	"github.com/kurz-dev/kurz/internal/analytics/capture"
)

// ClickDemand is a sink that wants clicks only at times: webhooks'
// dispatcher, while a Webhook subscribes to link.clicked. OnClickDemand
// registers a function it calls with true when it starts wanting clicks
// and false when it stops; it must be called before the manager starts.
type ClickDemand interface {
	analytics.Sink
	OnClickDemand(f func(on bool))
}

// OnDemand is the redirect's click capture without analytics, for a sink
// that wants clicks only at times (webhooks' link.clicked): nothing of it
// exists until the sink first wants clicks (no ring, no consumer, no
// goroutine but a waiting one), and the handler captures only while the
// sink wants them, through Switch. No store, no export, no visitor salts
// (the sink gets no visitor), no GeoIP file (analytics' flag): countries
// come from the trusted header only.
//
// It is a redirect click consumer (Replay, Run, Finish). With analytics
// on, the capture runs always and the sink is one of its sinks instead.
type OnDemand struct {
	o    capture.Options
	sink analytics.Sink
	// CountryHeader is --analytics-country-header.
	CountryHeader string

	// on is what the handler captures into: the ring while the sink wants
	// clicks, nil otherwise.
	on atomic.Pointer[capture.Ring]

	mu       sync.Mutex
	ring     *capture.Ring
	consumer *capture.Consumer
	finished bool
	// built is closed when the consumer is made: Run waits for it.
	built chan struct{}
}

// SetupOnDemand returns the on-demand capture of d's clicks, sized as
// analytics' capture; the country header comes from o. d tells it when
// to capture.
func SetupOnDemand(o Options, d ClickDemand) (*OnDemand, error) {
	co := o.Capture
	co.WriterID = writerID()
	if err := co.Validate(); err != nil {
		return nil, err
	}
	od := &OnDemand{o: co, sink: d, CountryHeader: o.CountryHeader, built: make(chan struct{})}
	d.OnClickDemand(od.set)
	return od, nil
}

// Switch is what the redirect handler captures into (nil: nothing).
func (od *OnDemand) Switch() *atomic.Pointer[capture.Ring] { return &od.on }

// set turns the capture on (building it the first time) or off. Off, the
// ring and the consumer stay: what the ring holds is still handed over,
// and the next time on costs nothing.
func (od *OnDemand) set(on bool) {
	od.mu.Lock()
	defer od.mu.Unlock()
	if !on || od.finished {
		od.on.Store(nil)
		return
	}
	if od.consumer == nil {
		ring := capture.NewRing(od.o.RingSize)
		c, err := capture.NewWithOutputs(od.o, ring, noSalts{}, nil, od.sink)
		if err != nil { // the options were validated in SetupOnDemand
			return
		}
		od.ring, od.consumer = ring, c
		close(od.built)
	}
	od.on.Store(od.ring)
}

// Replay has nothing to take back (clicks not handed over are lost with
// the process).
func (*OnDemand) Replay(context.Context) error { return nil }

// Run waits until the capture is first wanted, then drains the ring until
// ctx is done.
func (od *OnDemand) Run(ctx context.Context) {
	select {
	case <-ctx.Done():
		return
	case <-od.built:
	}
	if err := od.consumer.Replay(ctx); err != nil { // its logger; no store to start
		return
	}
	od.consumer.Run(ctx)
}

// Finish hands over the ring's last clicks; nothing is captured after it.
func (od *OnDemand) Finish(ctx context.Context) error {
	od.mu.Lock()
	od.finished = true
	od.on.Store(nil)
	c := od.consumer
	od.mu.Unlock()
	if c == nil {
		return nil
	}
	return c.Finish(ctx)
}

// noSalts hashes no visitor: the on-demand capture's sink gets none.
type noSalts struct{}

func (noSalts) Salts() (uint64, []analytics.DaySalt) { return 0, nil }
