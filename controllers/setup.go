package controllers

import (
	"context"
	"fmt"
	"time"

	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/kurz-dev/kurz/internal/dns"
	"github.com/kurz-dev/kurz/internal/fieldindex"
)

// Leader election: the controllers run on the elected replica only. Either
// the manager elects (Setup: controller-runtime's own election, which ends
// the process when the Lease is lost) or internal/manager campaigns itself
// and runs a fresh set from New for each term it leads. The Lease rights are
// not markers here on purpose: config/rbac/leader_election_role.yaml grants
// them in kurz's own namespace only, where a marker would grant them
// cluster-wide.

// Setup adds the controllers to mgr. They run on the elected leader only.
// Call it before mgr starts.
func Setup(mgr ctrl.Manager, o Options) error {
	return add(mgr, o)
}

// New builds the controllers on mgr's cache and client without adding them
// to mgr: the caller starts them (each only once) and stops them through
// their context. Each call builds a fresh set, so a replica that leads again
// starts new controllers; their names repeat, hence no name validation.
// Field indexes must have been registered before mgr started.
// The set includes a runnable that removes the event handlers the others
// added to mgr's informers when their context ends (term_handlers.go).
func New(mgr ctrl.Manager, o Options) ([]manager.Runnable, error) {
	h := &termHandlers{}
	c := &collector{Manager: mgr, cache: termCache{Cache: mgr.GetCache(), h: h}}
	if err := add(c, o); err != nil {
		return nil, err
	}
	return append(c.runnables, h), nil
}

// collector is a manager whose Add keeps the runnables instead of running
// them. The builder (watches, predicates, logging) then makes the same
// controllers as for Setup, left unmanaged: controller.NewTyped is
// controller.NewTypedUnmanaged followed by Add. Their watches and clients
// get the term's cache, whose event handlers end with the term.
type collector struct {
	ctrl.Manager
	cache     termCache
	runnables []manager.Runnable
}

func (c *collector) GetCache() cache.Cache { return c.cache }

func (c *collector) Add(r manager.Runnable) error {
	c.runnables = append(c.runnables, r)
	return nil
}

// GetControllerOptions skips name validation: "link" and "domain" are
// built again for every term.
func (c *collector) GetControllerOptions() config.Controller {
	o := c.Manager.GetControllerOptions()
	o.SkipNameValidation = ptr.To(true)
	return o
}

func add(mgr ctrl.Manager, o Options) error {
	if err := o.Validate(); err != nil {
		return err
	}
	verifier, err := dns.New(o.DNS)
	if err != nil {
		return err
	}
	statuses, err := ownWritesClient(mgr)
	if err != nil {
		return err
	}
	cached, err := fieldindex.NewLinks(context.Background(), sharedCache(mgr))
	if err != nil {
		return err
	}
	events := changes{emitter: o.Events}
	if o.Events != nil {
		if err := mgr.Add(leading{o.Events}); err != nil {
			return err
		}
	}
	links := &LinkReconciler{
		Client:   statuses,
		Recorder: mgr.GetEventRecorder("kurz.dev/link-controller"),
		Links:    cached,
		Now:      time.Now,
		events:   events,
	}
	if err := links.SetupWithManager(mgr, o.LinkWorkers); err != nil {
		return fmt.Errorf("set up Link controller: %w", err)
	}
	domains := &DomainReconciler{
		Client:   statuses,
		Recorder: mgr.GetEventRecorder("kurz.dev/domain-controller"),
		Verifier: verifier,
		Schedule: Schedule{Recheck: o.DNSRecheckInterval, Backoff: o.PendingBackoff, BackoffMax: o.PendingBackoffMax},
		Now:      time.Now,
		events:   events,
	}
	if err := domains.SetupWithManager(mgr, o.DomainWorkers); err != nil {
		return fmt.Errorf("set up Domain controller: %w", err)
	}
	if o.WebhookURLs != nil {
		hooks := &WebhookReconciler{
			Client:   statuses,
			Recorder: mgr.GetEventRecorder("kurz.dev/webhook-controller"),
			URLs:     o.WebhookURLs,
		}
		if err := hooks.SetupWithManager(mgr); err != nil {
			return fmt.Errorf("set up Webhook controller: %w", err)
		}
	}
	if !o.Routing() {
		return nil
	}
	routes := &RouteReconciler{
		Client:       mgr.GetClient(),
		Reader:       mgr.GetAPIReader(),
		Namespace:    o.Routes.Namespace,
		Grace:        o.Routes.GracePeriod,
		Certificates: o.CertManager,
		Now:          time.Now,
		events:       events,
	}
	if o.Ingress.Class != "" {
		routes.routes = ingressRoutes{config: o.Ingress.config(o.Routes.Namespace)}
		routes.Recorder = mgr.GetEventRecorder("kurz.dev/ingress-controller")
		if err := routes.SetupWithManager(mgr, "ingress", o.DomainWorkers); err != nil {
			return fmt.Errorf("set up Ingress controller: %w", err)
		}
		return nil
	}
	gw := o.Gateway.config(o.Routes.Namespace)
	routes.routes = gatewayRoutes{config: gw}
	routes.Recorder = mgr.GetEventRecorder("kurz.dev/httproute-controller")
	if err := routes.SetupWithManager(mgr, "httproute", o.DomainWorkers); err != nil {
		return fmt.Errorf("set up HTTPRoute controller: %w", err)
	}
	listeners := &GatewayReconciler{Client: mgr.GetClient(), Reader: mgr.GetAPIReader(), Config: gw}
	if err := listeners.SetupWithManager(mgr); err != nil {
		return fmt.Errorf("set up Gateway controller: %w", err)
	}
	return nil
}

// sharedCache is mgr's cache, without a term's wrapper: the Link index
// reads the Link informer's indexer and adds no handler.
func sharedCache(mgr ctrl.Manager) cache.Cache {
	if c, ok := mgr.(*collector); ok {
		return c.Manager.GetCache()
	}
	return mgr.GetCache()
}

// ownWritesClient is mgr's client, except that a read waits until the
// cache has seen the writes this client started before it
// (controller-runtime's read-your-writes consistency). The status
// controllers skip a write when the status they compute equals the one
// they read: read from a cache that has not yet seen their own last write
// to the object, that comparison is against a status already replaced, and
// the object keeps the newer one, now wrong, until something else wakes
// it (a Link left DomainNotFound after its Domain was deleted and
// recreated at once, on a loaded kube-apiserver). Lists do not wait: they
// would wait for every write in flight to the kind, and what they read
// (key peers, a hostname's Domains) is input that reconciles again
// whenever it changes.
func ownWritesClient(mgr ctrl.Manager) (client.Client, error) {
	c, err := client.New(mgr.GetConfig(), client.Options{
		HTTPClient: mgr.GetHTTPClient(),
		Scheme:     mgr.GetScheme(),
		Mapper:     mgr.GetRESTMapper(),
		Cache:      &client.CacheOptions{Reader: mgr.GetCache(), EnableReadYourWritesConsistency: ptr.To(true)},
	})
	if err != nil {
		return nil, fmt.Errorf("status controllers' client: %w", err)
	}
	return listsDoNotWait{c}, nil
}

// listsDoNotWait lists without waiting for the cache to see earlier writes.
type listsDoNotWait struct{ client.Client }

func (c listsDoNotWait) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	return c.Client.List(ctx, list, append(opts, client.DisableReadYourWritesConsistency)...)
}
