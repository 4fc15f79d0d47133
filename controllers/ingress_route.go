package controllers

import (
	"context"

	networkingv1 "k8s.io/api/networking/v1"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kurzv1alpha1 "github.com/kurz-dev/kurz/api/v1alpha1"
	"github.com/kurz-dev/kurz/internal/routing"
)

// ingressRoutes keeps one Ingress per Domain (--ingress-class): it routes
// as soon as it exists.
type ingressRoutes struct {
	config routing.IngressConfig
}

func (ingressRoutes) kind() string                { return "Ingress" }
func (ingressRoutes) name(ns, name string) string { return routing.IngressName(ns, name) }
func (ingressRoutes) noun() string                { return "Ingress" }
func (ingressRoutes) newObject() client.Object    { return &networkingv1.Ingress{} }
func (ingressRoutes) host(o client.Object) string { return routing.HostOf(o.(*networkingv1.Ingress)) }

func (s ingressRoutes) desired(d *kurzv1alpha1.Domain, _ client.Object) client.Object {
	return routing.DesiredIngress(s.config, d)
}

func (ingressRoutes) update(existing, desired client.Object) client.Object {
	return ownedUpdate(existing, desired.(*networkingv1.Ingress), func(i *networkingv1.Ingress) *networkingv1.IngressSpec { return &i.Spec })
}

func (ingressRoutes) served(_ context.Context, _ client.Reader, routed client.Object) (kurzv1alpha1.DomainTLS, string, error) {
	return kurzv1alpha1.DomainTLS{Ingress: routed.GetName()}, "", nil
}

func (ingressRoutes) secrets(o client.Object) []string {
	return routing.SecretsOf(o.(*networkingv1.Ingress))
}

func (s ingressRoutes) list(ctx context.Context, c client.Reader) ([]client.Object, error) {
	var list networkingv1.IngressList
	if err := c.List(ctx, &list, client.InNamespace(s.config.Namespace),
		client.MatchingLabels{routing.LabelManagedBy: routing.ManagedBy}, client.UnsafeDisableDeepCopy); err != nil {
		return nil, err
	}
	out := make([]client.Object, len(list.Items))
	for i := range list.Items {
		out[i] = &list.Items[i]
	}
	return out, nil
}

func (ingressRoutes) watch(b *builder.Builder, _ *RouteReconciler) *builder.Builder { return b }
