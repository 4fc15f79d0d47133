package claims

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// KeyClaim is what the key rule looks at for one Link claiming a (domain,
// key), so that callers holding less than a whole object (the redirect
// index) need not fabricate one.
type KeyClaim struct {
	Namespace, Name string
	// Created is the Link's creationTimestamp.
	Created time.Time
	// Deleting is true once the Link has a deletionTimestamp: it claims
	// nothing any more.
	Deleting bool
}

// KeyClaimOf returns the key claim facts of a Link.
func KeyClaimOf(o metav1.Object) KeyClaim {
	return KeyClaim{Namespace: o.GetNamespace(), Name: o.GetName(), Created: o.GetCreationTimestamp().Time, Deleting: o.GetDeletionTimestamp() != nil}
}

// KeyHolder returns the index of the claim that holds a (domain, key) among
// cs (the claims of one namespace), or -1 when none can: the oldest claim
// of a Link not being deleted.
func KeyHolder(cs []KeyClaim) int {
	holder := -1
	for i := range cs {
		if cs[i].Deleting {
			continue
		}
		if holder < 0 || cs[i].older(cs[holder]) {
			holder = i
		}
	}
	return holder
}

// older reports whether a was created before b, ties broken by namespace,
// then name.
func (a KeyClaim) older(b KeyClaim) bool {
	if !a.Created.Equal(b.Created) {
		return a.Created.Before(b.Created)
	}
	if a.Namespace != b.Namespace {
		return a.Namespace < b.Namespace
	}
	return a.Name < b.Name
}
