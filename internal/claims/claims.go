// Package claims decides who owns a contested name: which Domain holds a
// hostname claimed by several namespaces (the oldest claim, see DomainOwner),
// and which Link holds a (domain, key) claimed by several Links (the oldest
// Link). The controllers, the API and the redirect index
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
// claim it (all with the same spec.domain), or nil when none can: the oldest
// claim wins. A claim's age is status.claim.since, when the Domain started
// claiming this hostname, not its creation: spec.domain is mutable, and an
// old Domain edited to another workspace's hostname must not take it over.
// A Domain without a current claim (new, or edited and not yet reconciled)
// ranks after every Domain with one; ties break as in Older. Domains being
// deleted no longer claim anything, so the claim passes on at once.
func DomainOwner(domains []kurzv1alpha1.Domain) *kurzv1alpha1.Domain {
	var owner *kurzv1alpha1.Domain
	for i := range domains {
		d := &domains[i]
		if d.DeletionTimestamp != nil {
			continue
		}
		if owner == nil || olderClaim(d, owner) {
			owner = d
		}
	}
	return owner
}

// ClaimSince returns when d started claiming its spec.domain, and false when
// it has no current claim (status.claim is unset or for another hostname).
func ClaimSince(d *kurzv1alpha1.Domain) (metav1.MicroTime, bool) {
	c := d.Status.Claim
	if c == nil || c.Hostname != string(d.Spec.Domain) {
		return metav1.MicroTime{}, false
	}
	return c.Since, true
}

// olderClaim reports whether a's claim on the hostname precedes b's.
func olderClaim(a, b *kurzv1alpha1.Domain) bool {
	sa, aok := ClaimSince(a)
	sb, bok := ClaimSince(b)
	if aok != bok {
		return aok
	}
	if aok && !sa.Equal(&sb) {
		return sa.Before(&sb)
	}
	return Older(a, b)
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
