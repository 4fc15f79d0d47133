package controllers

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	kurzv1alpha1 "github.com/kurz-dev/kurz/api/v1alpha1"
	"github.com/kurz-dev/kurz/internal/routing"
)

// gatewayRoutes keeps one HTTPRoute per Domain (--gateway-class,
// --gateway). GatewayReconciler gives it a listener in one of kurz's
// Gateways or ListenerSets; only then does it serve.
type gatewayRoutes struct {
	config routing.GatewayConfig
}

func (gatewayRoutes) kind() string                { return "HTTPRoute" }
func (gatewayRoutes) name(ns, name string) string { return routing.RouteName(ns, name) }
func (gatewayRoutes) noun() string                { return "Gateway listener" }
func (gatewayRoutes) newObject() client.Object    { return &gatewayv1.HTTPRoute{} }
func (gatewayRoutes) host(o client.Object) string {
	return routing.RouteHost(o.(*gatewayv1.HTTPRoute))
}

// desired keeps the Gateway or ListenerSet existing was assigned: a
// hostname keeps its Gateway, and so its certificate.
func (s gatewayRoutes) desired(d *kurzv1alpha1.Domain, existing client.Object) client.Object {
	parent := ""
	if existing != nil {
		parent = routing.RouteParent(existing.(*gatewayv1.HTTPRoute))
	}
	return routing.DesiredHTTPRoute(s.config, d, parent)
}

func (gatewayRoutes) update(existing, desired client.Object) client.Object {
	return ownedUpdate(existing, desired.(*gatewayv1.HTTPRoute), func(r *gatewayv1.HTTPRoute) *gatewayv1.HTTPRouteSpec { return &r.Spec })
}

// served: the route serves once its HTTPS listener is in the Gateway or
// ListenerSet its parentRefs name.
func (s gatewayRoutes) served(ctx context.Context, c client.Reader, routed client.Object) (kurzv1alpha1.DomainTLS, string, error) {
	route := routed.(*gatewayv1.HTTPRoute)
	host, parent := routing.RouteHost(route), routing.RouteParent(route)
	where := kurzv1alpha1.DomainTLS{HTTPRoute: route.Name}
	kind := s.config.ParentKind()
	if parent == "" {
		return where, fmt.Sprintf("HTTPRoute %s waits for kurz to give %s a listener in one of its %ss", route.Name, host, kind), nil
	}
	obj := newParent(s.config)
	switch err := c.Get(ctx, types.NamespacedName{Namespace: s.config.Namespace, Name: parent}, obj); {
	case apierrors.IsNotFound(err):
	case err != nil:
		return where, "", fmt.Errorf("get %s %s: %w", kind, parent, err)
	}
	listener := routing.ListenerName(host)
	if routing.Listeners(obj)[listener] != host {
		return where, fmt.Sprintf("HTTPRoute %s waits for its listener %s in %s %s", route.Name, listener, kind, parent), nil
	}
	where.Listener = listener
	if s.config.ListenerSets() {
		where.ListenerSet = parent
		where.Gateway = s.config.Parent.String()
	} else {
		where.Gateway = s.config.Namespace + "/" + parent
	}
	return where, "", nil
}

func (gatewayRoutes) secrets(o client.Object) []string {
	r := o.(*gatewayv1.HTTPRoute)
	out := make([]string, 0, len(r.Spec.Hostnames))
	for _, h := range r.Spec.Hostnames {
		out = append(out, routing.SecretName(string(h)))
	}
	return out
}

func (s gatewayRoutes) list(ctx context.Context, c client.Reader) ([]client.Object, error) {
	routes, err := listRoutes(ctx, c, s.config.Namespace)
	if err != nil {
		return nil, err
	}
	out := make([]client.Object, len(routes))
	for i := range routes {
		out[i] = &routes[i]
	}
	return out, nil
}

// watch: a listener added to or removed from a Gateway or ListenerSet
// changes TLSReady of the Domains whose routes it holds.
func (s gatewayRoutes) watch(b *builder.Builder, r *RouteReconciler) *builder.Builder {
	return b.Watches(newParent(s.config), handler.EnqueueRequestsFromMapFunc(func(ctx context.Context, o client.Object) []reconcile.Request {
		return r.domainsOfRoutes(ctx, func(route client.Object) bool {
			return routing.RouteParent(route.(*gatewayv1.HTTPRoute)) == o.GetName()
		})
	}))
}

// listRoutes lists kurz's HTTPRoutes in namespace.
func listRoutes(ctx context.Context, c client.Reader, namespace string) ([]gatewayv1.HTTPRoute, error) {
	var list gatewayv1.HTTPRouteList
	if err := c.List(ctx, &list, client.InNamespace(namespace),
		client.MatchingLabels{routing.LabelManagedBy: routing.ManagedBy}); err != nil {
		return nil, fmt.Errorf("list HTTPRoutes: %w", err)
	}
	return list.Items, nil
}

// newParent is an empty Gateway or ListenerSet, whichever holds kurz's
// listeners.
func newParent(c routing.GatewayConfig) client.Object {
	if c.ListenerSets() {
		return &gatewayv1.ListenerSet{}
	}
	return &gatewayv1.Gateway{}
}
