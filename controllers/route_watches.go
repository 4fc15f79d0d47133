package controllers

import (
	"context"
	"slices"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/kurz-dev/kurz/internal/routing"
)

// domainOfRoute maps one of kurz's Ingresses or HTTPRoutes to its Domain,
// whether or not that Domain still exists: an orphan is removed by its
// Domain's pass.
func domainOfRoute(_ context.Context, o client.Object) []reconcile.Request {
	if key, ok := routing.DomainOf(o); ok {
		return []reconcile.Request{{NamespacedName: key}}
	}
	return nil
}

// domainsOfSecret maps a Secret of kurz's namespace to the Domains whose
// route names it. Secrets carry nothing of kurz (cert-manager or a person
// creates them), so the routes are searched: one list of the cache per
// Secret change, which certificates make rare.
func (r *RouteReconciler) domainsOfSecret(ctx context.Context, o client.Object) []reconcile.Request {
	// The Secret informer also holds tenants' webhook signing Secrets.
	if o.GetNamespace() != r.Namespace {
		return nil
	}
	return r.domainsUsingSecret(ctx, o.GetName())
}

// domainsOfCertificate maps a cert-manager Certificate to the Domains whose
// route names its spec.secretName.
func (r *RouteReconciler) domainsOfCertificate(ctx context.Context, o client.Object) []reconcile.Request {
	u, ok := o.(*unstructured.Unstructured)
	if !ok {
		return nil
	}
	return r.domainsUsingSecret(ctx, routing.CertificateFrom(u).SecretName)
}

func (r *RouteReconciler) domainsUsingSecret(ctx context.Context, secret string) []reconcile.Request {
	if secret == "" {
		return nil
	}
	return r.domainsOfRoutes(ctx, func(o client.Object) bool { return slices.Contains(r.routes.secrets(o), secret) })
}

// domainsOfRoutes maps kurz's routes for which match holds to their
// Domains.
func (r *RouteReconciler) domainsOfRoutes(ctx context.Context, match func(client.Object) bool) []reconcile.Request {
	objs, err := r.routes.list(ctx, r.Client)
	if err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "list routes", "kind", r.routes.kind())
		return nil
	}
	var reqs []reconcile.Request
	for _, o := range objs {
		if !match(o) {
			continue
		}
		if key, ok := routing.DomainOf(o); ok {
			reqs = append(reqs, reconcile.Request{NamespacedName: key})
		}
	}
	return reqs
}
