package e2e

import (
	"errors"
	"sync"
	"sync/atomic"
	"time"
)

// Probing like the Deployment's readiness probe, scaled down: a replica
// leaves the endpoints after probeFailures failed probes probePeriod apart,
// well within its shutdownDelay.
const (
	probePeriod   = 200 * time.Millisecond
	probeFailures = 2
	shutdownDelay = time.Second
)

var errNoEndpoint = errors.New("no ready endpoint")

// endpoints stands in for a Service's EndpointSlice and kube-proxy: it
// probes each replica's /readyz and hands out the ready ones round robin,
// so traffic leaves a replica only when its readiness says so.
type endpoints struct {
	replicas []*replica
	ready    []atomic.Bool
	next     atomic.Uint64
	stopCh   chan struct{}
	wg       sync.WaitGroup
}

func watchEndpoints(replicas ...*replica) *endpoints {
	e := &endpoints{replicas: replicas, ready: make([]atomic.Bool, len(replicas)), stopCh: make(chan struct{})}
	for i, r := range replicas {
		e.ready[i].Store(r.ready() == nil)
		e.wg.Add(1)
		go e.probe(i)
	}
	return e
}

// probe marks replica i ready on a good probe and unready after
// probeFailures bad ones in a row, as the kubelet does.
func (e *endpoints) probe(i int) {
	defer e.wg.Done()
	failures := 0
	tick := time.NewTicker(probePeriod)
	defer tick.Stop()
	for {
		select {
		case <-e.stopCh:
			return
		case <-tick.C:
		}
		if e.replicas[i].ready() == nil {
			failures = 0
			e.ready[i].Store(true)
			continue
		}
		if failures++; failures >= probeFailures {
			e.ready[i].Store(false)
		}
	}
}

// pick is the redirect address of the next ready replica.
func (e *endpoints) pick() (string, error) {
	n := len(e.replicas)
	start := int(e.next.Add(1))
	for k := range n {
		i := (start + k) % n
		if e.ready[i].Load() {
			return e.replicas[i].redirect, nil
		}
	}
	return "", errNoEndpoint
}

func (e *endpoints) stop() {
	close(e.stopCh)
	e.wg.Wait()
}
