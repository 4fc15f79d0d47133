package controllers

import (
	"context"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"

	kurzv1alpha1 "github.com/kurz-dev/kurz/api/v1alpha1"
	"github.com/kurz-dev/kurz/internal/claims"
	"github.com/kurz-dev/kurz/internal/fieldindex"
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
// TLSReady condition.
func (r *RouteReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	var live *kurzv1alpha1.Domain
	d := &kurzv1alpha1.Domain{}
	if err := r.Get(ctx, req.NamespacedName, d); err == nil {
		if d.DeletionTimestamp == nil {
			live = d
		}
	} else if !apierrors.IsNotFound(err) {
		return ctrl.Result{}, err
	}

	var existing client.Object
	key := types.NamespacedName{Namespace: r.Namespace, Name: r.routes.name(req.Namespace, req.Name)}
	existingHost := ""
	obj := r.routes.newObject()
	switch err := r.Get(ctx, key, obj); {
	case err == nil:
		existing, existingHost = obj, r.routes.host(obj)
	case !apierrors.IsNotFound(err):
		return ctrl.Result{}, fmt.Errorf("get %s %s: %w", r.routes.kind(), key.Name, err)
	}

	holds := false
	if live != nil {
		var err error
		if holds, err = r.holdsHostname(ctx, live); err != nil {
			return ctrl.Result{}, err
		}
	}
	now := r.Now()
	decision := routing.Decide(live, holds, existingHost, r.Grace, now)
	routed, err := r.applyDecision(ctx, decision, live, existing)
	blocked := ""
	if apierrors.IsAlreadyExists(err) && !r.owns(ctx, key) {
		// Not kurz's (no managed-by label): say so in TLSReady and retry
		// with the work queue's backoff.
		blocked = fmt.Sprintf("%s %s in %s exists and is not kurz's (no %s=%s label): delete or rename it",
			r.routes.kind(), key.Name, key.Namespace, routing.LabelManagedBy, routing.ManagedBy)
	}
	switch {
	case blocked != "":
	case apierrors.IsConflict(err) || apierrors.IsAlreadyExists(err):
		ctrl.LoggerFrom(ctx).V(1).Info("route changed meanwhile, retrying", "kind", r.routes.kind(), "name", key.Name)
		return ctrl.Result{RequeueAfter: conflictRetry}, nil
	case err != nil:
		return ctrl.Result{}, err
	}
	result := ctrl.Result{RequeueAfter: decision.Wait}
	if live == nil {
		return result, nil
	}
	wait, statusErr := r.setTLSStatus(ctx, live, routed, blocked, now)
	if blocked != "" {
		return ctrl.Result{}, errors.Join(err, statusErr)
	}
	err = statusErr
	if err != nil {
		if apierrors.IsConflict(err) {
			return ctrl.Result{RequeueAfter: conflictRetry}, nil
		}
		return ctrl.Result{}, err
	}
	if wait > 0 && (result.RequeueAfter == 0 || wait < result.RequeueAfter) {
		result.RequeueAfter = wait
	}
	return result, nil
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

// holdsHostname reports whether d owns its hostname among every Domain that
// claims it (internal/claims decides, as for serving).
func (r *RouteReconciler) holdsHostname(ctx context.Context, d *kurzv1alpha1.Domain) (bool, error) {
	var claimants kurzv1alpha1.DomainList
	if err := r.List(ctx, &claimants, client.MatchingFields{fieldindex.Domain: string(d.Spec.Domain)}); err != nil {
		return false, fmt.Errorf("list Domains of %s: %w", d.Spec.Domain, err)
	}
	owner := claims.DomainOwner(withSelf(claimants.Items, d))
	return owner != nil && owner.Namespace == d.Namespace && owner.Name == d.Name, nil
}

// applyDecision carries decision out and returns the object that routes
// the Domain afterwards (nil: none).
func (r *RouteReconciler) applyDecision(ctx context.Context, decision routing.Decision, d *kurzv1alpha1.Domain, existing client.Object) (client.Object, error) {
	log := ctrl.LoggerFrom(ctx)
	kind := r.routes.kind()
	switch decision.Action {
	case routing.Keep:
		log.V(1).Info("keeping the route through the grace period", "kind", kind, "name", klog.KObj(existing), "for", decision.Wait)
		return existing, nil
	case routing.Remove:
		if existing == nil {
			return nil, nil
		}
		uid := existing.GetUID()
		if err := r.Delete(ctx, existing, client.Preconditions{UID: &uid}); err != nil && !apierrors.IsNotFound(err) {
			return nil, fmt.Errorf("delete %s %s: %w", kind, existing.GetName(), err)
		}
		log.Info("deleted route", "kind", kind, "name", klog.KObj(existing), "host", r.routes.host(existing))
		return nil, nil
	}
	desired := r.routes.desired(d, existing)
	if existing == nil {
		if err := r.Create(ctx, desired); err != nil {
			return nil, fmt.Errorf("create %s %s: %w", kind, desired.GetName(), err)
		}
		log.Info("created route", "kind", kind, "name", klog.KObj(desired), "host", d.Spec.Domain)
		return desired, nil
	}
	updated := r.routes.update(existing, desired)
	if updated == nil {
		return existing, nil
	}
	if err := r.Update(ctx, updated); err != nil {
		return nil, fmt.Errorf("update %s %s: %w", kind, existing.GetName(), err)
	}
	log.Info("updated route", "kind", kind, "name", klog.KObj(updated), "host", d.Spec.Domain)
	return updated, nil
}
