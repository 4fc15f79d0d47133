package controllers

import (
	"context"
	"errors"
	"fmt"
	"slices"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/kurz-dev/kurz/internal/routing"
)

// GatewayReconciler keeps kurz's Gateways (--gateway-class) or ListenerSets
// (--gateway) holding one HTTPS listener for each of kurz's HTTPRoutes,
// which RouteReconciler keeps per Domain: it assigns each new route a
// Gateway with room (routing.Assign), writes the listeners, and deletes
// the Gateways left empty. The routes are the record of what goes where,
// so a listener whose route is gone, even while kurz was down, is removed
// on the next pass. All of this is one request: assigning from one
// consistent list never puts two hostnames in the last free slot. It reads
// past the cache, so a pass never assigns from a stale view of its own
// last writes.
type GatewayReconciler struct {
	client.Client
	Reader client.Reader
	Config routing.GatewayConfig
}

// gatewayRequest is the one request of GatewayReconciler.
var gatewayRequest = reconcile.Request{NamespacedName: types.NamespacedName{Name: "listeners"}}

// SetupWithManager registers the controller: any change to kurz's
// HTTPRoutes, Gateways or ListenerSets enqueues the one request.
func (r *GatewayReconciler) SetupWithManager(mgr ctrl.Manager) error {
	all := handler.EnqueueRequestsFromMapFunc(func(context.Context, client.Object) []reconcile.Request {
		return []reconcile.Request{gatewayRequest}
	})
	return ctrl.NewControllerManagedBy(mgr).
		Named("gateway").
		Watches(&gatewayv1.HTTPRoute{}, all).
		Watches(newParent(r.Config), all).
		Complete(r)
}

// In kurz's own namespace only, like the Ingresses; a shared Gateway of
// another namespace is only named by the ListenerSets, never read.

// +kubebuilder:rbac:groups=gateway.networking.k8s.io,resources=httproutes,verbs=get;list;watch;create;update;delete,namespace=kurz-system
// +kubebuilder:rbac:groups=gateway.networking.k8s.io,resources=gateways,verbs=get;list;watch;create;update;delete,namespace=kurz-system
// +kubebuilder:rbac:groups=gateway.networking.k8s.io,resources=listenersets,verbs=get;list;watch;create;update;delete,namespace=kurz-system

// Reconcile assigns listeners and writes the Gateways or ListenerSets, then
// the routes' parentRefs, then deletes the empty ones: a route names its
// listener only once it exists, and a Gateway goes only once no route
// names it.
func (r *GatewayReconciler) Reconcile(ctx context.Context, _ ctrl.Request) (ctrl.Result, error) {
	routes, err := listRoutes(ctx, r.Reader, r.Config.Namespace)
	if err != nil {
		return ctrl.Result{}, err
	}
	parents, err := r.listParents(ctx)
	if err != nil {
		return ctrl.Result{}, err
	}
	var slots []routing.RouteSlot
	for i := range routes {
		if h := routing.RouteHost(&routes[i]); h != "" && routes[i].DeletionTimestamp == nil {
			slots = append(slots, routing.RouteSlot{Name: routes[i].Name, Host: h, Parent: routing.RouteParent(&routes[i])})
		}
	}
	owned := map[string][]string{}
	var taken []string
	for name, obj := range parents {
		if obj.GetLabels()[routing.LabelManagedBy] != routing.ManagedBy {
			taken = append(taken, name)
			continue
		}
		owned[name] = nil
		for listener, host := range routing.Listeners(obj) {
			if listener != routing.HTTPListenerName {
				owned[name] = append(owned[name], host)
			}
		}
	}
	plan := routing.Assign(slots, owned, taken, r.Config.Capacity())

	var errs []error
	names := make([]string, 0, len(plan.Parents))
	for name := range plan.Parents {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		errs = append(errs, r.writeParent(ctx, parents[name], name, plan.Parents[name]))
	}
	if err := errors.Join(errs...); err != nil {
		return r.retry(ctx, err)
	}
	for i := range routes {
		errs = append(errs, r.assign(ctx, &routes[i], plan))
	}
	if err := errors.Join(errs...); err != nil {
		return r.retry(ctx, err)
	}
	for _, name := range plan.Delete {
		obj := parents[name]
		uid := obj.GetUID()
		if err := r.Delete(ctx, obj, client.Preconditions{UID: &uid}); err != nil && !apierrors.IsNotFound(err) {
			errs = append(errs, fmt.Errorf("delete %s %s: %w", r.Config.ParentKind(), name, err))
			continue
		}
		ctrl.LoggerFrom(ctx).Info("deleted empty "+r.Config.ParentKind(), "name", klog.KObj(obj))
	}
	if err := errors.Join(errs...); err != nil {
		return r.retry(ctx, err)
	}
	return ctrl.Result{}, nil
}

// retry requeues soon after a conflict (a route or Gateway changed
// meanwhile), else returns err for the work queue's backoff.
func (r *GatewayReconciler) retry(ctx context.Context, err error) (ctrl.Result, error) {
	if apierrors.IsConflict(err) || apierrors.IsAlreadyExists(err) {
		ctrl.LoggerFrom(ctx).V(1).Info("listeners changed meanwhile, retrying", "error", err.Error())
		return ctrl.Result{RequeueAfter: conflictRetry}, nil
	}
	return ctrl.Result{}, err
}

// listParents reads every Gateway or ListenerSet of kurz's namespace,
// kurz's and others' (whose names kurz must not take), by name.
func (r *GatewayReconciler) listParents(ctx context.Context) (map[string]client.Object, error) {
	var list client.ObjectList = &gatewayv1.GatewayList{}
	if r.Config.ListenerSets() {
		list = &gatewayv1.ListenerSetList{}
	}
	if err := r.Reader.List(ctx, list, client.InNamespace(r.Config.Namespace)); err != nil {
		return nil, fmt.Errorf("list %ss: %w", r.Config.ParentKind(), err)
	}
	out := map[string]client.Object{}
	err := meta.EachListItem(list, func(o runtime.Object) error {
		obj := o.(client.Object)
		out[obj.GetName()] = obj
		return nil
	})
	return out, err
}

// writeParent creates or updates kurz's Gateway or ListenerSet name
// (existing, nil: none) to hold the listeners of hosts. Labels, annotations
// and spec others set are replaced, as with kurz's Ingresses: these objects
// are kurz's; the rest of their metadata (finalizers of an implementation)
// is kept.
func (r *GatewayReconciler) writeParent(ctx context.Context, existing client.Object, name string, hosts []string) error {
	var desired, updated client.Object
	if r.Config.ListenerSets() {
		ls := routing.DesiredListenerSet(r.Config, name, hosts)
		desired, updated = ls, ownedUpdate(existing, ls, func(o *gatewayv1.ListenerSet) *gatewayv1.ListenerSetSpec { return &o.Spec })
	} else {
		gw := routing.DesiredGateway(r.Config, name, hosts)
		desired, updated = gw, ownedUpdate(existing, gw, func(o *gatewayv1.Gateway) *gatewayv1.GatewaySpec { return &o.Spec })
	}
	log := ctrl.LoggerFrom(ctx)
	kind := r.Config.ParentKind()
	switch {
	case existing == nil:
		if err := r.Create(ctx, desired); err != nil {
			return fmt.Errorf("create %s %s: %w", kind, name, err)
		}
		log.Info("created "+kind, "name", klog.KObj(desired), "hostnames", len(hosts))
	case updated != nil:
		if err := r.Update(ctx, updated); err != nil {
			return fmt.Errorf("update %s %s: %w", kind, name, err)
		}
		log.Info("updated "+kind, "name", klog.KObj(updated), "hostnames", len(hosts))
	}
	return nil
}

// assign points route's parentRefs at the Gateway or ListenerSet plan
// gives it, when they do not already.
func (r *GatewayReconciler) assign(ctx context.Context, route *gatewayv1.HTTPRoute, plan routing.Plan) error {
	parent, planned := plan.Routes[route.Name]
	if !planned || parent == routing.RouteParent(route) {
		return nil
	}
	route.Spec.ParentRefs = routing.ParentRefs(r.Config, parent, routing.RouteHost(route))
	if err := r.Update(ctx, route); err != nil {
		return fmt.Errorf("assign HTTPRoute %s to %s %s: %w", route.Name, r.Config.ParentKind(), parent, err)
	}
	ctrl.LoggerFrom(ctx).Info("assigned HTTPRoute", "route", klog.KObj(route), "parent", parent, "host", routing.RouteHost(route))
	return nil
}
