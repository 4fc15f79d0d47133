package controllers

import (
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kurz-dev/kurz/internal/routing"
)

// ownedObject is an object kurz keeps (an Ingress, HTTPRoute, Gateway or
// ListenerSet) that copies itself to its own type.
type ownedObject[O any] interface {
	client.Object
	DeepCopy() O
}

// ownedUpdate is the update that makes existing match desired, or nil when
// it matches already (or existing is nil). kurz owns the labels, the
// annotations and the spec (spec returns an object's): those are replaced,
// whoever set them; the rest of the metadata, such as an implementation's
// finalizers, is kept.
func ownedUpdate[O ownedObject[O], S any](existing client.Object, desired O, spec func(O) *S) client.Object {
	e, ok := existing.(O)
	if !ok || !routing.Differs(e, desired, spec(e), spec(desired)) {
		return nil
	}
	u := e.DeepCopy()
	u.SetLabels(desired.GetLabels())
	u.SetAnnotations(desired.GetAnnotations())
	*spec(u) = *spec(desired)
	return u
}
