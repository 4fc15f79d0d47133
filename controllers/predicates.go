package controllers

import (
	"k8s.io/apimachinery/pkg/api/equality"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	kurzv1alpha1 "github.com/kurz-dev/kurz/api/v1alpha1"
)

// specOrClaimChanged passes what GenerationChangedPredicate passes, and also
// a Domain's status-only update that changes status.claim: the claim decides
// who holds a hostname, so recording one can move a hostname (or, more
// often, confirms who holds it) for the Domains and Links that share it.
// Other status writes (lastCheckTime above all) still cause nothing.
var specOrClaimChanged = predicate.Or[client.Object](predicate.GenerationChangedPredicate{}, predicate.Funcs{
	CreateFunc:  func(event.CreateEvent) bool { return false },
	DeleteFunc:  func(event.DeleteEvent) bool { return false },
	GenericFunc: func(event.GenericEvent) bool { return false },
	UpdateFunc:  func(e event.UpdateEvent) bool { return claimChanged(e.ObjectOld, e.ObjectNew) },
})

// claimChanged reports whether two versions of a Domain differ in
// status.claim; false for anything else. decidedAt alone is no change: it
// moves no hostname (an upgrade sets it on every claim once).
func claimChanged(before, after client.Object) bool {
	o, ok1 := before.(*kurzv1alpha1.Domain)
	n, ok2 := after.(*kurzv1alpha1.Domain)
	return ok1 && ok2 && !equality.Semantic.DeepEqual(undecided(o.Status.Claim), undecided(n.Status.Claim))
}

// undecided returns c without decidedAt.
func undecided(c *kurzv1alpha1.DomainClaim) *kurzv1alpha1.DomainClaim {
	if c == nil || c.DecidedAt == nil {
		return c
	}
	c = c.DeepCopy()
	c.DecidedAt = nil
	return c
}

// notInInitialList drops the Create events of an informer's first list
// (and of the replay a watch added later gets): the controller's own For()
// watch enqueues every object of that list already, so mapping each to
// others repeats work before the first reconcile. At a replica's start
// with 100 000 Links, the Link controller's two mapping watches spent
// 2.5 CPU-seconds listing key peers and a Domain's Links this way, while
// the redirect index waited for the same CPU.
var notInInitialList = predicate.Funcs{
	CreateFunc: func(e event.CreateEvent) bool { return !e.IsInInitialList },
}
