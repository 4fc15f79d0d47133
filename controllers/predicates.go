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
// status.claim; false for anything else.
func claimChanged(before, after client.Object) bool {
	o, ok1 := before.(*kurzv1alpha1.Domain)
	n, ok2 := after.(*kurzv1alpha1.Domain)
	return ok1 && ok2 && !equality.Semantic.DeepEqual(o.Status.Claim, n.Status.Claim)
}
