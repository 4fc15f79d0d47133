package controllers

import (
	"context"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"

	kurzv1alpha1 "github.com/kurz-dev/kurz/api/v1alpha1"
	"github.com/kurz-dev/kurz/internal/routing"
)

// routeStore is what differs between the ways kurz routes a Domain's
// hostname: the object kept per Domain (an Ingress, or an HTTPRoute whose
// Gateway listener the GatewayReconciler keeps) and what says it serves.
// RouteReconciler runs the lifecycle, the same for every way.
type routeStore interface {
	// kind is the per-Domain object's kind, for messages.
	kind() string
	// name is the name of the per-Domain object of the Domain
	// namespace/name, in kurz's namespace.
	name(namespace, name string) string
	// noun names what serves the hostname in TLSReady's messages.
	noun() string
	// newObject is an empty per-Domain object to read into.
	newObject() client.Object
	// host is the hostname an object of kurz routes ("" when none).
	host(client.Object) string
	// desired is the object d should have; existing (nil: none) keeps what
	// kurz assigned it before (an HTTPRoute's Gateway).
	desired(d *kurzv1alpha1.Domain, existing client.Object) client.Object
	// update is existing with desired's labels, annotations and spec, or
	// nil when it has them already (ownedUpdate).
	update(existing, desired client.Object) client.Object
	// served says where routed (the Domain's object after this pass)
	// serves the hostname, as status.tls's route fields; blocked is why
	// it does not yet ("" when it does).
	served(ctx context.Context, c client.Reader, routed client.Object) (where kurzv1alpha1.DomainTLS, blocked string, err error)
	// secrets are the Secrets an object of kurz names.
	secrets(client.Object) []string
	// list are kurz's objects of this kind.
	list(ctx context.Context, c client.Reader) ([]client.Object, error)
	// watch adds the watches beyond the per-Domain object, Secrets and
	// Certificates (a Gateway's listeners) to b.
	watch(b *builder.Builder, r *RouteReconciler) *builder.Builder
}

// RouteReconciler keeps, in kurz's namespace, what routes every Domain
// that holds its hostname and is Active: one Ingress (--ingress-class), or
// one HTTPRoute plus its HTTPS listener in a Gateway or ListenerSet
// (--gateway-class, --gateway), so the cluster routes https://<domain>/ to
// the redirect Service and cert-manager (through the annotations) issues
// its certificate. It also sets the Domain's TLSReady condition. Requests
// are Domain keys; the object of a Domain is found by name
// (routeStore.name), so one whose Domain is gone, even while kurz was
// down, is removed when its informer lists it on start.
type RouteReconciler struct {
	client.Client
	// Reader reads past the cache, to tell an object the cache has not
	// seen yet from one that is not kurz's (which it never sees).
	Reader   client.Reader
	Recorder events.EventRecorder
	// Namespace is kurz's own: the routes, Secrets and Certificates.
	Namespace string
	routes    routeStore
	// Grace is how long a route outlives its Domain's Active phase.
	Grace time.Duration
	// Certificates: cert-manager's Certificate kind is installed.
	Certificates bool
	// Now is the clock; tests may stop it.
	Now func() time.Time
	// events emits domain.tls_ready for webhooks.
	events changes
}

// SetupWithManager registers the controller. Every Domain event counts, its
// status writes above all (Active, Ready), so there is no predicate; a pass
// that changes nothing writes nothing.
func (r *RouteReconciler) SetupWithManager(mgr ctrl.Manager, name string, workers int) error {
	b := ctrl.NewControllerManagedBy(mgr).
		Named(name).
		For(&kurzv1alpha1.Domain{}).
		Watches(r.routes.newObject(), handler.EnqueueRequestsFromMapFunc(domainOfRoute)).
		Watches(&corev1.Secret{}, handler.EnqueueRequestsFromMapFunc(r.domainsOfSecret)).
		WithOptions(controller.Options{MaxConcurrentReconciles: max(workers, 1)})
	if r.Certificates {
		b = b.Watches(newCertificate(), handler.EnqueueRequestsFromMapFunc(r.domainsOfCertificate))
	}
	return r.routes.watch(b, r).Complete(r)
}

// The rights below are a Role in kurz's own namespace (config/ installs
// into kurz-system; the Helm chart into its release namespace), never
// cluster-wide: kurz reads Secrets of its own namespace only.

// +kubebuilder:rbac:groups=networking.k8s.io,resources=ingresses,verbs=get;list;watch;create;update;delete,namespace=kurz-system
// +kubebuilder:rbac:groups="",resources=secrets,verbs=get;list;watch,namespace=kurz-system
// +kubebuilder:rbac:groups=cert-manager.io,resources=certificates,verbs=get;list;watch,namespace=kurz-system
// +kubebuilder:rbac:groups=kurz.dev,resources=domains,verbs=get;list;watch
// +kubebuilder:rbac:groups=kurz.dev,resources=domains/status,verbs=patch
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

// Reconcile creates, updates or deletes the Domain's route and sets its
// TLSReady condition, in two phases (route_phases.go) over what it reads
// once.
func (r *RouteReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	s, err := r.scope(ctx, req)
	if err != nil {
		return ctrl.Result{}, err
	}
	return runPhases(ctx, s, r.reconcileRoute, r.reconcileTLS)
}

// owns reports whether the object key, read past the cache, is kurz's;
// true when it cannot tell (the next pass will).
func (r *RouteReconciler) owns(ctx context.Context, key types.NamespacedName) bool {
	obj := r.routes.newObject()
	if err := r.Reader.Get(ctx, key, obj); err != nil {
		return true
	}
	return obj.GetLabels()[routing.LabelManagedBy] == routing.ManagedBy
}
