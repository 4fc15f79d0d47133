package controllers

import (
	"fmt"
	"time"

	ctrl "sigs.k8s.io/controller-runtime"

	kurzv1alpha1 "github.com/kurz-dev/kurz/api/v1alpha1"
	"github.com/kurz-dev/kurz/internal/claims"
	"github.com/kurz-dev/kurz/internal/timestamps"
)

// setLinkStatus computes the link's status from its inputs. It reports
// whether it stamped timestamps, which must be written under an optimistic
// lock. Status fields kurz does not own (clicks, lastClickTime) are left be.
func setLinkStatus(link *kurzv1alpha1.Link, in linkInputs, now time.Time) (stamped bool) {
	stamped = timestamps.StampLink(link, now)
	link.Status.ShortURL = link.ShortURL()
	link.Status.ObservedGeneration = link.Generation

	reason := claims.LinkReason(link, in.domains, in.peers, now)
	setReadiness(link, linkReadiness(link, reason, in))
	return stamped
}

// linkReadiness says how the state of reason reads (see the api package
// docs): Active and Expired are settled, a KeyConflict is stalled, and a
// DomainNotFound waits or stalls as the link's Domain does.
func linkReadiness(link *kurzv1alpha1.Link, reason string, in linkInputs) readiness {
	r := readiness{reason: reason, message: linkMessage(link, reason, in)}
	switch reason {
	case kurzv1alpha1.ReasonActive, kurzv1alpha1.ReasonExpired:
		r.progress = settled
	case kurzv1alpha1.ReasonKeyConflict:
		r.progress = stalled
	default:
		r.progress, r.cause = domainWait(link, in.domains)
	}
	return r
}

// domainWait says what a link that its namespace's Domain does not serve
// waits for: that Domain to be created (DomainNotFound) or to publish its
// TXT record while nobody holds the hostname (TXTRequired), or, stalled,
// the removal of the other Domain that holds it (DomainClaimed).
func domainWait(link *kurzv1alpha1.Link, domains []kurzv1alpha1.Domain) (progress, string) {
	if !hasOwnDomain(link, domains) {
		return waiting, kurzv1alpha1.ReasonDomainNotFound
	}
	if claims.DomainOwner(domains) == nil {
		return waiting, kurzv1alpha1.ReasonTXTRequired
	}
	return stalled, kurzv1alpha1.ReasonDomainClaimed
}

// hasOwnDomain reports whether a live Domain of the link's namespace has
// its hostname (domains all have it).
func hasOwnDomain(link *kurzv1alpha1.Link, domains []kurzv1alpha1.Domain) bool {
	for i := range domains {
		if domains[i].Namespace == link.Namespace && domains[i].DeletionTimestamp == nil {
			return true
		}
	}
	return false
}

// linkMessage explains reason to a person. It never names another
// namespace's objects: a workspace only learns that a hostname is taken.
func linkMessage(link *kurzv1alpha1.Link, reason string, in linkInputs) string {
	switch reason {
	case kurzv1alpha1.ReasonActive:
		return "The link serves " + link.ShortURL()
	case kurzv1alpha1.ReasonDomainNotFound:
		if hasOwnDomain(link, in.domains) {
			// The same words whoever holds the hostname (another
			// workspace, or nobody while a contested claim waits for its
			// TXT record): a change elsewhere need not rewrite it.
			return fmt.Sprintf("Domain %s does not own its hostname: its Ready condition says why and which TXT record to publish", link.Spec.Domain)
		}
		return fmt.Sprintf("No Domain %s in this namespace", link.Spec.Domain)
	case kurzv1alpha1.ReasonKeyConflict:
		if w := claims.KeyWinner(in.peers); w != nil && w.Name != link.Name {
			return fmt.Sprintf("Link %s, which is older, holds the key %q on %s", w.Name, link.Spec.Key, link.Spec.Domain)
		}
		return fmt.Sprintf("An older Link holds the key %q on %s", link.Spec.Key, link.Spec.Domain)
	case kurzv1alpha1.ReasonExpired:
		return "The link expired at " + link.Spec.ExpiresAt.UTC().Format(time.RFC3339)
	}
	return ""
}

// linkRequeue schedules the pass that flips a live link to Expired at its
// expiresAt, so expiry needs no polling.
func linkRequeue(link *kurzv1alpha1.Link, now time.Time) ctrl.Result {
	if d, ok := claims.ExpiresIn(link, now); ok {
		return ctrl.Result{RequeueAfter: d}
	}
	return ctrl.Result{}
}
