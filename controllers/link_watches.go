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

// linksSharingKey maps a Link to the other Links of its namespace with the
// same domain and key, whose KeyConflict it may cause or resolve. On a spec
// change it is called with the old and the new object, so both the group it
// left and the one it joined are reconciled.
func (r *LinkReconciler) linksSharingKey(ctx context.Context, o client.Object) []reconcile.Request {
	l, ok := o.(*kurzv1alpha1.Link)
	if !ok {
		return nil
	}
	var peers kurzv1alpha1.LinkList
	if err := r.List(ctx, &peers, client.InNamespace(l.Namespace),
		client.MatchingFields{fieldindex.DomainKey: domainKey(l)}, client.UnsafeDisableDeepCopy); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "list Links sharing a key", "domainKey", domainKey(l))
		return nil
	}
	reqs := make([]reconcile.Request, 0, len(peers.Items))
	for i := range peers.Items {
		if p := &peers.Items[i]; p.Name != l.Name {
			reqs = append(reqs, reconcile.Request{NamespacedName: types.NamespacedName{Namespace: p.Namespace, Name: p.Name}})
		}
	}
	return reqs
}

// linksOfDomain maps a Domain to every Link of its hostname, in every
// namespace: the Domain's arrival, departure or hostname change can move
// the hostname's claim from one namespace to another.
func (r *LinkReconciler) linksOfDomain(ctx context.Context, o client.Object) []reconcile.Request {
	d, ok := o.(*kurzv1alpha1.Domain)
	if !ok {
		return nil
	}
	var links kurzv1alpha1.LinkList
	if err := r.List(ctx, &links, client.MatchingFields{fieldindex.Domain: string(d.Spec.Domain)},
		client.UnsafeDisableDeepCopy); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "list Links of a Domain", "domain", d.Spec.Domain)
		return nil
	}
	reqs := make([]reconcile.Request, len(links.Items))
	for i := range links.Items {
		reqs[i] = reconcile.Request{NamespacedName: types.NamespacedName{Namespace: links.Items[i].Namespace, Name: links.Items[i].Name}}
	}
	return reqs
}

// domainKey is the link's value in the fieldindex.DomainKey index.
func domainKey(l *kurzv1alpha1.Link) string {
	return fieldindex.DomainKeyOf(string(l.Spec.Domain), l.Spec.Key)
}
