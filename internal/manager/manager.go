package manager

import (
	"context"
	"fmt"
	"time"

	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	kurzv1alpha1 "github.com/kurz-dev/kurz/api/v1alpha1"
	"github.com/kurz-dev/kurz/controllers"
	"github.com/kurz-dev/kurz/internal/analytics"
	"github.com/kurz-dev/kurz/internal/analytics/wiring"
	"github.com/kurz-dev/kurz/internal/cacheslim"
	"github.com/kurz-dev/kurz/internal/fieldindex"
	"github.com/kurz-dev/kurz/internal/gauges"
	"github.com/kurz-dev/kurz/internal/initialevents"
	"github.com/kurz-dev/kurz/internal/redirect"
	"github.com/kurz-dev/kurz/internal/restapi"
	"github.com/kurz-dev/kurz/internal/scheme"
	"github.com/kurz-dev/kurz/internal/webhooks"
)

// Scheme is kurz's one scheme (internal/scheme): the built-in kinds,
// CustomResourceDefinitions and kurz.dev/v1alpha1.
var Scheme = scheme.Scheme

// Manager is the controller-runtime manager with kurz's roles, its
// readiness and its shutdown sequence (Run).
type Manager struct {
	ctrl.Manager
	o      Options
	ready  readiness
	leader *leader // nil without leader election
	// initialLinks is the Link informer's first stream, fed to the
	// indexes as it arrives.
	initialLinks *initialevents.Feed[*kurzv1alpha1.Link]
}

// shutdownMargin is added to the longest shutdown step of the roles to give
// the manager's GracefulShutdownTimeout.
const shutdownMargin = 5 * time.Second

// New builds a manager with the roles o enables. Start it with Run (or
// Start, without the shutdown delay).
//
// With o.LeaderElect the manager itself does not elect: controller-runtime's
// election would end the process, servers included, when the Lease is lost.
// A runnable of every replica campaigns instead and runs the controllers
// while it leads (leader.go).
func New(ctx context.Context, cfg *rest.Config, o Options) (*Manager, error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	grace := gracefulShutdownTimeout(o)
	byObject, err := cacheByObject(cfg, &o)
	if err != nil {
		return nil, err
	}
	links, err := LinkListWatch(cfg)
	if err != nil {
		return nil, err
	}
	// The redirect, list and find indexes take the Links of the first
	// watch-list as they stream, not after the last one.
	initialLinks := initialevents.New[*kurzv1alpha1.Link]()
	o.API.InitialLinks, o.Redirect.InitialLinks = initialLinks, initialLinks
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:                  Scheme,
		Metrics:                 metricsOptions(o),
		HealthProbeBindAddress:  o.HealthProbeBindAddress,
		PprofBindAddress:        o.PprofBindAddress,
		GracefulShutdownTimeout: &grace,
		Cache: cache.Options{
			// Every replica holds every Link: managedFields, the
			// last-applied annotation and repeated strings would be most
			// of its memory (internal/cacheslim).
			DefaultTransform: cacheslim.Transform,
			ByObject:         byObject,
			NewInformer:      informersWith(initialLinks.Wrap(links)),
		},
	})
	if err != nil {
		return nil, fmt.Errorf("create manager: %w", err)
	}
	m := &Manager{Manager: mgr, o: o, initialLinks: initialLinks}
	startLog := mgr.GetLogger().WithName("start")
	initialLinks.OnCut(func(c initialevents.Cut) { logCut(startLog, c) })
	if err := fieldindex.Setup(ctx, mgr.GetFieldIndexer()); err != nil {
		return nil, err
	}
	if err := mgr.AddHealthzCheck("healthz", healthz.Ping); err != nil {
		return nil, err
	}
	if err := m.ready.setup(mgr); err != nil {
		return nil, err
	}
	if err := mgr.Add(runnableFunc(func(context.Context) error {
		m.logInitialLinks()
		return nil
	})); err != nil {
		return nil, err
	}
	if err := gauges.Register(mgr); err != nil {
		return nil, err
	}
	// The webhooks' dispatcher also takes the analytics capture's enriched
	// clicks (link.clicked).
	var sinks []analytics.Sink
	var dispatcher *webhooks.Dispatcher
	if o.EnableWebhooks {
		d, err := webhooks.Setup(mgr, o.Webhooks)
		if err != nil {
			return nil, fmt.Errorf("set up webhook delivery: %w", err)
		}
		m.o.Controllers.Events = d
		m.o.Controllers.WebhookURLs = webhooks.NewChecker(o.Webhooks)
		sinks = append(sinks, d)
		dispatcher = d
	}
	if o.EnableControllers {
		if err := m.setupControllers(cfg); err != nil {
			return nil, fmt.Errorf("set up controllers: %w", err)
		}
	}
	// Analytics first: the API server reads its store, the redirect server
	// runs its capture.
	var an *wiring.Analytics
	if o.EnableAPI || o.EnableRedirect {
		if an, err = wiring.Setup(ctx, mgr, o.Analytics, o.EnableRedirect, sinks...); err != nil {
			return nil, fmt.Errorf("set up analytics: %w", err)
		}
	}
	if o.EnableRedirect {
		switch {
		case an != nil && an.Ring != nil:
			o.Redirect.Analytics = redirect.AnalyticsCapture{Ring: an.Ring, Consumer: an.Consumer, CountryHeader: an.CountryHeader}
		case dispatcher != nil:
			// No analytics: link.clicked still needs the capture, but only
			// while a Webhook wants clicks; until then it costs nothing.
			od, err := wiring.SetupOnDemand(o.Analytics, dispatcher)
			if err != nil {
				return nil, fmt.Errorf("set up click capture for webhooks: %w", err)
			}
			o.Redirect.Analytics = redirect.AnalyticsCapture{OnDemand: od.Switch(), Consumer: od, CountryHeader: od.CountryHeader}
		}
		ix, err := redirect.Setup(mgr, o.Redirect)
		if err != nil {
			return nil, fmt.Errorf("set up redirect server: %w", err)
		}
		// The API's answer to a write waits for this replica's redirect
		// index too: a click sent once the answer is in finds the write.
		o.API.Served = ix
	}
	if o.EnableAPI {
		if an != nil {
			o.API.Analytics = an.Store
		}
		if err := restapi.Setup(mgr, o.API); err != nil {
			return nil, fmt.Errorf("set up API server: %w", err)
		}
	}
	return m, nil
}

// processStart is about when the process began (package initialization).
var processStart = time.Now()

// logInitialLinks says, once the caches synced, whether the indexes took
// the Link informer's first list as it streamed and how long the stream
// took, the part of a start kube-apiserver paces, and what came before and
// after it: the process's start to the watch's answer, the bookmark to
// the caches' sync.
func (m *Manager) logInitialLinks() {
	log := m.GetLogger().WithName("start")
	if s, ok := m.initialLinks.Fed(); ok {
		ms := func(d time.Duration) string { return d.Round(time.Millisecond).String() }
		log.Info("the indexes took the Links as they streamed", "events", s.Events, "stream", ms(s.Took),
			"beforeStream", ms(s.Began.Sub(processStart)), "afterStream", ms(time.Since(s.Began.Add(s.Took))))
		return
	}
	log.Info("the Links came as a list, not a watch-list stream: the indexes took them once it was whole")
}

// setupControllers adds the controllers: directly without leader election
// (one replica), else through the campaigning runnable.
func (m *Manager) setupControllers(cfg *rest.Config) error {
	if !m.o.LeaderElect {
		return controllers.Setup(m.Manager, m.o.Controllers)
	}
	l, err := newLeader(cfg, m.o, func() ([]manager.Runnable, error) {
		return controllers.New(m.Manager, m.o.Controllers)
	})
	if err != nil {
		return err
	}
	m.leader = l
	return m.Add(l)
}

// gracefulShutdownTimeout bounds how long the runnables may take to stop
// once the manager's context is done: the redirect server drains and then
// flushes clicks (each up to its shutdown timeout), the API server drains,
// and the leader releases its Lease (up to the renew deadline).
func gracefulShutdownTimeout(o Options) time.Duration {
	return max(2*o.Redirect.ShutdownTimeout, o.API.ShutdownTimeout, o.RenewDeadline) + shutdownMargin
}
