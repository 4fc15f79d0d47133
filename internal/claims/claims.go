// Package claims decides who owns a contested name: which Domain holds a
// hostname claimed by several namespaces, and which Link holds a (domain, key)
// claimed by several Links. The controllers, the API and the redirect index
// all ask here, so they can never disagree.
package claims

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	kurzv1alpha1 "github.com/kurz-dev/kurz/api/v1alpha1"
)

// Older reports whether a was created before b. Ties (creationTimestamp has
// one-second resolution) break on namespace, then name, so every replica
// reaches the same answer.
func Older(a, b metav1.Object) bool {
	ta, tb := a.GetCreationTimestamp(), b.GetCreationTimestamp()
	if !ta.Equal(&tb) {
		return ta.Before(&tb)
	}
	if a.GetNamespace() != b.GetNamespace() {
		return a.GetNamespace() < b.GetNamespace()
	}
	return a.GetName() < b.GetName()
}

// DomainOwner returns the Domain that holds a hostname among the Domains that
// claim it (all with the same spec.domain), or nil when none can. Domains being
// deleted no longer claim anything, so the claim passes on at once.
func DomainOwner(domains []kurzv1alpha1.Domain) *kurzv1alpha1.Domain {
	var owner *kurzv1alpha1.Domain
	for i := range domains {
		d := &domains[i]
		if d.DeletionTimestamp != nil {
			continue
		}
		if owner == nil || Older(d, owner) {
			owner = d
		}
	}
	return owner
}

// KeyWinner returns the Link that holds a (domain, key) among the Links of one
// namespace that claim it, or nil when none can.
func KeyWinner(links []kurzv1alpha1.Link) *kurzv1alpha1.Link {
	var winner *kurzv1alpha1.Link
	for i := range links {
		l := &links[i]
		if l.DeletionTimestamp != nil {
			continue
		}
		if winner == nil || Older(l, winner) {
			winner = l
		}
	}
	return winner
}
