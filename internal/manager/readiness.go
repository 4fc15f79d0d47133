package manager

import (
	"context"
	"errors"
	"net/http"
	"sync/atomic"

	ctrl "sigs.k8s.io/controller-runtime"
)

// readiness is what /readyz reports beyond the roles' own checks (the
// redirect index adds its own): ready once the caches have synced, not
// ready once shutdown began. It never asks kube-apiserver: a replica that
// serves from memory through a control-plane outage stays ready.
type readiness struct {
	synced   atomic.Bool
	draining atomic.Bool
}

func (r *readiness) setup(mgr ctrl.Manager) error {
	// The manager starts runnables that need no election only once its
	// caches (every informer the roles registered) have synced.
	if err := mgr.Add(runnableFunc(func(ctx context.Context) error {
		r.synced.Store(true)
		return nil
	})); err != nil {
		return err
	}
	if err := mgr.AddReadyzCheck("caches", func(*http.Request) error {
		if !r.synced.Load() {
			return errors.New("caches not synced yet")
		}
		return nil
	}); err != nil {
		return err
	}
	return mgr.AddReadyzCheck("shutdown", func(*http.Request) error {
		if r.draining.Load() {
			return errors.New("shutting down")
		}
		return nil
	})
}

// runnableFunc is a manager runnable of every replica.
type runnableFunc func(context.Context) error

func (f runnableFunc) Start(ctx context.Context) error { return f(ctx) }
func (runnableFunc) NeedLeaderElection() bool          { return false }
