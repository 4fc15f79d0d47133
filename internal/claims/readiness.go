package claims

import (
	"time"

	kurzv1alpha1 "github.com/kurz-dev/kurz/api/v1alpha1"
)

// LinkReason is the reason of a Link's Ready condition, decided from what the
// caller looked up: domains are the Domains (of every namespace) whose
// spec.domain is the link's domain, peers the Links of the link's namespace
// with the same domain and key (others are ignored; the link itself may be
// among them). It is a
// pure function, so the controller and the redirect index always agree on
// whether a link serves.
//
// The checks run in order: DomainNotFound (no Domain holds the hostname for
// the link's namespace), KeyConflict (an older Link holds the key), Expired
// (expiresAt has passed), else Active.
func LinkReason(link *kurzv1alpha1.Link, domains []kurzv1alpha1.Domain, peers []kurzv1alpha1.Link, now time.Time) string {
	if !DomainServes(link.Namespace, domains) {
		return kurzv1alpha1.ReasonDomainNotFound
	}
	if !HoldsKey(link, peers) {
		return kurzv1alpha1.ReasonKeyConflict
	}
	if Expired(link, now) {
		return kurzv1alpha1.ReasonExpired
	}
	return kurzv1alpha1.ReasonActive
}

// DomainServes reports whether namespace holds the hostname that domains
// (every Domain with that spec.domain) claim: the owner (DomainOwner: TXT
// proof first, then the oldest uncontested claim) lives in namespace.
func DomainServes(namespace string, domains []kurzv1alpha1.Domain) bool {
	owner := DomainOwner(domains)
	return owner != nil && owner.Namespace == namespace
}

// Expired reports whether the link's expiresAt is at or before now.
func Expired(link *kurzv1alpha1.Link, now time.Time) bool {
	return link.Spec.ExpiresAt != nil && !now.Before(link.Spec.ExpiresAt.Time)
}

// ExpiresIn returns how long until the link expires, and false when it has
// no expiry or has already expired.
func ExpiresIn(link *kurzv1alpha1.Link, now time.Time) (time.Duration, bool) {
	if link.Spec.ExpiresAt == nil || Expired(link, now) {
		return 0, false
	}
	return link.Spec.ExpiresAt.Sub(now), true
}

// HoldsKey reports whether link holds its (domain, key) against peers: no
// older Link of its namespace claims the same pair. Peers of other
// namespaces, domains or keys, and the link itself, are ignored, so a list
// that lags behind (a cache) gives the same answer.
func HoldsKey(link *kurzv1alpha1.Link, peers []kurzv1alpha1.Link) bool {
	if link.DeletionTimestamp != nil {
		return false
	}
	for i := range peers {
		p := &peers[i]
		if p.Namespace != link.Namespace || p.Name == link.Name ||
			p.Spec.Domain != link.Spec.Domain || p.Spec.Key != link.Spec.Key ||
			p.DeletionTimestamp != nil {
			continue
		}
		if Older(p, link) {
			return false
		}
	}
	return true
}
