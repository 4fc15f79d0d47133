package controllers

import (
	"context"
	"slices"
	"sync"

	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	kurzv1alpha1 "github.com/kurz-dev/kurz/api/v1alpha1"
	"github.com/kurz-dev/kurz/internal/claims"
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
	peers, err := r.Links.KeyPeers(l.Namespace, string(l.Spec.Domain), l.Spec.Key)
	if err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "list Links sharing a key")
		return nil
	}
	reqs := make([]reconcile.Request, 0, len(peers))
	for i := range peers {
		if p := &peers[i]; p.Name != l.Name {
			reqs = append(reqs, reconcile.Request{NamespacedName: types.NamespacedName{Namespace: p.Namespace, Name: p.Name}})
		}
	}
	return reqs
}

// linksOfDomain maps a Domain event to the Links it can affect: the Links
// of the Domain's own namespace and hostname, and, when the event moved the
// hostname to another namespace, the Links of the namespace that lost it
// and of the one that gained it (of every namespace with a Domain of the
// hostname when it moved from or to nobody). Not every namespace's Links of the
// hostname: a tenant churning a Domain that owns nothing (a squatter's)
// must not make the controller reconcile the owner's links each time.
// On a hostname change it is called with the old and the new object, so
// both hostnames are settled.
func (r *LinkReconciler) linksOfDomain(ctx context.Context, o client.Object) []reconcile.Request {
	d, ok := o.(*kurzv1alpha1.Domain)
	if !ok {
		return nil
	}
	hostname := string(d.Spec.Domain)
	namespaces := []string{d.Namespace}
	var domains kurzv1alpha1.DomainList
	if err := r.List(ctx, &domains, client.MatchingFields{fieldindex.Domain: hostname}); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "list Domains of a hostname", "domain", hostname)
	} else {
		owner := ""
		if od := claims.DomainOwner(domains.Items); od != nil {
			owner = od.Namespace
		}
		if before, changed := r.owners.swap(hostname, owner, len(domains.Items) == 0); changed {
			namespaces = append(namespaces, before, owner)
			if before == "" || owner == "" {
				// Held by nobody before or after: the Links of every
				// claimant namespace go from waiting for TXT proof to
				// stalled behind the holder, or back. Only the holder
				// leaving or arriving does this, never a claimant
				// churning a Domain that owns nothing.
				for i := range domains.Items {
					namespaces = append(namespaces, domains.Items[i].Namespace)
				}
			}
		}
	}
	var reqs []reconcile.Request
	seen := map[string]bool{}
	for _, ns := range namespaces {
		if ns == "" || seen[ns] {
			continue
		}
		seen[ns] = true
		names, err := r.Links.OnDomain(ns, hostname)
		if err != nil {
			ctrl.LoggerFrom(ctx).Error(err, "list Links of a Domain", "domain", hostname, "namespace", ns)
			continue
		}
		reqs = slices.Grow(reqs, len(names))
		for _, name := range names {
			reqs = append(reqs, reconcile.Request{NamespacedName: types.NamespacedName{Namespace: ns, Name: name}})
		}
	}
	return reqs
}

// hostOwners remembers which namespace held each hostname when the Link
// controller last looked, so a Domain event can tell whether it moved the
// hostname. It starts empty: the first event of a hostname counts as a
// move to its owner, which reconciles that owner's Links once.
type hostOwners struct {
	mu     sync.Mutex
	owners map[string]string
}

// swap records owner as the holder of hostname (forgetting it when gone)
// and returns the one before and whether it changed.
func (h *hostOwners) swap(hostname, owner string, gone bool) (string, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.owners == nil {
		h.owners = map[string]string{}
	}
	before, known := h.owners[hostname]
	if gone {
		delete(h.owners, hostname)
	} else {
		h.owners[hostname] = owner
	}
	return before, !known || before != owner
}
