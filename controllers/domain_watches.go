package controllers

import (
	"context"

	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	kurzv1alpha1 "github.com/kurz-dev/kurz/api/v1alpha1"
	"github.com/kurz-dev/kurz/internal/fieldindex"
)

// domainsSharingHostname maps a Domain to the other Domains, in every
// namespace, with the same hostname. On a hostname change it is called with
// the old and the new object, so the claim it released and the one it
// contests are both settled again.
func (r *DomainReconciler) domainsSharingHostname(ctx context.Context, o client.Object) []reconcile.Request {
	d, ok := o.(*kurzv1alpha1.Domain)
	if !ok {
		return nil
	}
	var others kurzv1alpha1.DomainList
	if err := r.List(ctx, &others, client.MatchingFields{fieldindex.Domain: string(d.Spec.Domain)},
		client.UnsafeDisableDeepCopy); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "list Domains sharing a hostname", "domain", d.Spec.Domain)
		return nil
	}
	var reqs []reconcile.Request
	for i := range others.Items {
		if o := &others.Items[i]; o.Namespace != d.Namespace || o.Name != d.Name {
			reqs = append(reqs, reconcile.Request{NamespacedName: types.NamespacedName{Namespace: o.Namespace, Name: o.Name}})
		}
	}
	return reqs
}
