package webhooks

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kurzv1alpha1 "github.com/kurz-dev/kurz/api/v1alpha1"
)

// signingSelector selects the Secrets a Webhook may sign with.
var signingSelector = labels.SelectorFromSet(labels.Set{kurzv1alpha1.WebhookSigningLabel: "true"})

// CacheSecrets adds the signing Secrets to a cache's per-kind settings (by
// may be nil): the Secrets of every namespace that carry the label
// kurz.dev/webhook-signing=true, selected by kube-apiserver (the cache
// lists and watches with the label selector), so no other tenant Secret
// ever reaches kurz's memory. RBAC cannot grant by label: the manager's
// ClusterRole lets it list and watch every Secret, and this selector is
// what keeps it to the labelled ones (docs/security.md).
//
// When by already caches Secrets in some namespaces (kurz's own, for the
// route controllers' TLS Secrets), those keep their settings and the
// other namespaces get the label selector; the transform keeps the data
// of labelled Secrets and applies the existing transform to the others.
func CacheSecrets(by map[client.Object]cache.ByObject) map[client.Object]cache.ByObject {
	if by == nil {
		by = map[client.Object]cache.ByObject{}
	}
	for obj, cfg := range by {
		if _, ok := obj.(*corev1.Secret); !ok {
			continue
		}
		delete(by, obj)
		if len(cfg.Namespaces) == 0 {
			// Already cluster-wide: a label narrows it further (routing
			// never caches Secrets so; kept for completeness).
			cfg.Label = signingSelector
		} else {
			// A copy: other kinds' settings may share the map.
			ns := make(map[string]cache.Config, len(cfg.Namespaces)+1)
			for k, v := range cfg.Namespaces {
				ns[k] = v
			}
			ns[cache.AllNamespaces] = cache.Config{LabelSelector: signingSelector}
			cfg.Namespaces = ns
		}
		cfg.Transform = keepSigning(cfg.Transform)
		by[&corev1.Secret{}] = cfg
		return by
	}
	by[&corev1.Secret{}] = cache.ByObject{Label: signingSelector, Transform: keepSigning(nil)}
	return by
}

// keepSigning keeps a signing Secret's data and drops its managedFields;
// other Secrets go through next (when set).
func keepSigning(next func(any) (any, error)) func(any) (any, error) {
	return func(obj any) (any, error) {
		s, ok := obj.(*corev1.Secret)
		if ok && s.Labels[kurzv1alpha1.WebhookSigningLabel] == "true" {
			s.ManagedFields = nil
			return s, nil
		}
		if next != nil {
			return next(obj)
		}
		return obj, nil
	}
}
