package redirect

import (
	"context"
	"fmt"
	"net/http"

	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/kurz-dev/kurz/internal/redirect/clicks"
)

// Setup adds the redirect server to mgr and returns its index, which an
// API server in the same process waits on (restapi.Options.Served). It
// runs on every replica.
func Setup(mgr ctrl.Manager, o Options) (*Index, error) {
	srv, err := setup(mgr, o)
	if err != nil {
		return nil, err
	}
	return srv.ix, nil
}

func setup(mgr ctrl.Manager, o Options) (*Server, error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	registerMetrics()
	ix := NewIndex()
	writer, err := clicks.New(o.Clicks, ix.queue, mgr.GetClient(), mgr.GetAPIReader(), ix.counterFor)
	if err != nil {
		return nil, err
	}
	// Setup has no context of its own; before the manager starts, GetInformer
	// only registers the informer, it does not block.
	regs, err := ix.watch(context.Background(), mgr.GetCache(), o.InitialLinks)
	if err != nil {
		return nil, err
	}
	consumers := []ClickConsumer{writer}
	if o.Analytics.Consumer != nil {
		consumers = append(consumers, o.Analytics.Consumer)
	}
	srv, err := NewServer(o, ix, consumers...)
	if err != nil {
		return nil, err
	}
	srv.synced = regs
	if err := mgr.AddReadyzCheck("redirect-index", func(*http.Request) error { return srv.Ready() }); err != nil {
		return nil, fmt.Errorf("add redirect readiness check: %w", err)
	}
	if err := mgr.Add(srv); err != nil {
		return nil, fmt.Errorf("add redirect server: %w", err)
	}
	return srv, nil
}
