package manager

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	kurzv1alpha1 "github.com/kurz-dev/kurz/api/v1alpha1"
	"github.com/kurz-dev/kurz/controllers"
	"github.com/kurz-dev/kurz/internal/apiserver"
	"github.com/kurz-dev/kurz/internal/fieldindex"
	"github.com/kurz-dev/kurz/internal/redirect"
)

// Scheme knows the built-in kinds and kurz.dev/v1alpha1.
var Scheme = newScheme()

func newScheme() *runtime.Scheme {
	s := runtime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(s))
	utilruntime.Must(kurzv1alpha1.AddToScheme(s))
	return s
}

// New builds a manager with the roles o enables. Start it with mgr.Start.
func New(ctx context.Context, cfg *rest.Config, o Options) (ctrl.Manager, error) {
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:                  Scheme,
		Metrics:                 metricsserver.Options{BindAddress: o.MetricsBindAddress},
		HealthProbeBindAddress:  o.HealthProbeBindAddress,
		LeaderElection:          o.LeaderElect,
		LeaderElectionID:        o.LeaderElectionID,
		LeaderElectionNamespace: o.LeaderElectionNamespace,
		// Release the Lease on a clean shutdown so a standby takes over at
		// once instead of waiting for the lease to expire.
		LeaderElectionReleaseOnCancel: true,
		Cache: cache.Options{
			// managedFields are a large share of every object and no role
			// reads them; dropping them keeps memory per link small.
			DefaultTransform: cache.TransformStripManagedFields(),
		},
	})
	if err != nil {
		return nil, fmt.Errorf("create manager: %w", err)
	}
	if err := fieldindex.Setup(ctx, mgr.GetFieldIndexer()); err != nil {
		return nil, err
	}
	if err := mgr.AddHealthzCheck("healthz", healthz.Ping); err != nil {
		return nil, err
	}
	if err := mgr.AddReadyzCheck("readyz", healthz.Ping); err != nil {
		return nil, err
	}
	if o.EnableControllers {
		if err := controllers.Setup(mgr, o.Controllers); err != nil {
			return nil, fmt.Errorf("set up controllers: %w", err)
		}
	}
	if o.EnableAPI {
		if err := apiserver.Setup(mgr, o.API); err != nil {
			return nil, fmt.Errorf("set up API server: %w", err)
		}
	}
	if o.EnableRedirect {
		if err := redirect.Setup(mgr, o.Redirect); err != nil {
			return nil, fmt.Errorf("set up redirect server: %w", err)
		}
	}
	return mgr, nil
}

// Run builds the manager and runs it until ctx is done.
func Run(ctx context.Context, cfg *rest.Config, o Options) error {
	mgr, err := New(ctx, cfg, o)
	if err != nil {
		return err
	}
	return mgr.Start(ctx)
}
