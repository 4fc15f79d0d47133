package manager

import (
	"context"
	"time"

	ctrl "sigs.k8s.io/controller-runtime"
)

// Drain makes /readyz fail from now on; the servers keep serving.
func (m *Manager) Drain() { m.ready.draining.Store(true) }

// Run starts the manager and runs it until stop is done or a runnable
// fails. When stop is done it first reports not ready (Drain) and keeps
// serving for the shutdown delay, so endpoints and load balancers stop
// sending traffic to this replica; only then does it stop the manager: the
// servers stop accepting and drain, clicks are flushed, the controllers
// stop and the Lease is released.
func (m *Manager) Run(stop context.Context) error {
	ctx, cancel := context.WithCancel(context.WithoutCancel(stop))
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- m.Start(ctx) }()

	select {
	case err := <-done:
		return err // a runnable failed
	case <-stop.Done():
	}
	log := ctrl.Log.WithName("shutdown")
	m.Drain()
	if d := m.o.ShutdownDelay; d > 0 {
		log.Info("shutting down: not ready, serving until endpoints drop this replica", "delay", d.String())
		t := time.NewTimer(d)
		select {
		case <-t.C:
		case err := <-done:
			t.Stop()
			return err
		}
	}
	log.Info("shutting down: draining connections and flushing clicks")
	cancel()
	return <-done
}
