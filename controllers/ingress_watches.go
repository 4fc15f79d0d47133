package controllers

import (
	"context"
	"slices"

	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/kurz-dev/kurz/internal/routing"
)

// domainOfIngress maps one of kurz's Ingresses to its Domain, whether or not
// that Domain still exists: an orphan is removed by its Domain's pass.
func domainOfIngress(_ context.Context, o client.Object) []reconcile.Request {
	if key, ok := routing.DomainOf(o); ok {
		return []reconcile.Request{{NamespacedName: key}}
	}
	return nil
}

// domainsOfSecret maps a Secret of kurz's namespace to the Domains whose
// Ingress names it. Secrets carry nothing of kurz (cert-manager or a person
// creates them), so the Ingresses are searched: one list of the cache per
// Secret change, which certificates make rare.
func (r *IngressReconciler) domainsOfSecret(ctx context.Context, o client.Object) []reconcile.Request {
	return r.domainsUsingSecret(ctx, o.GetName())
}

// domainsOfCertificate maps a cert-manager Certificate to the Domains whose
// Ingress names its spec.secretName.
func (r *IngressReconciler) domainsOfCertificate(ctx context.Context, o client.Object) []reconcile.Request {
	u, ok := o.(*unstructured.Unstructured)
	if !ok {
		return nil
	}
	return r.domainsUsingSecret(ctx, routing.CertificateFrom(u).SecretName)
}

func (r *IngressReconciler) domainsUsingSecret(ctx context.Context, secret string) []reconcile.Request {
	if secret == "" {
		return nil
	}
	var list networkingv1.IngressList
	if err := r.List(ctx, &list, client.InNamespace(r.Config.Namespace),
		client.MatchingLabels{routing.LabelManagedBy: routing.ManagedBy}, client.UnsafeDisableDeepCopy); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "list Ingresses", "secret", secret)
		return nil
	}
	var reqs []reconcile.Request
	for i := range list.Items {
		if !slices.Contains(routing.SecretsOf(&list.Items[i]), secret) {
			continue
		}
		if key, ok := routing.DomainOf(&list.Items[i]); ok {
			reqs = append(reqs, reconcile.Request{NamespacedName: key})
		}
	}
	return reqs
}
