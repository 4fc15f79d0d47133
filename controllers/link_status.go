package controllers

import (
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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
	status := metav1.ConditionFalse
	if reason == kurzv1alpha1.ReasonActive {
		status = metav1.ConditionTrue
	}
	meta.SetStatusCondition(&link.Status.Conditions, metav1.Condition{
		Type:               kurzv1alpha1.ConditionReady,
		Status:             status,
		Reason:             reason,
		Message:            linkMessage(link, reason, in),
		ObservedGeneration: link.Generation,
	})
	return stamped
}

// linkMessage explains reason to a person. It never names another
// namespace's objects: a workspace only learns that a hostname is taken.
func linkMessage(link *kurzv1alpha1.Link, reason string, in linkInputs) string {
	switch reason {
	case kurzv1alpha1.ReasonActive:
		return "The link serves " + link.ShortURL()
	case kurzv1alpha1.ReasonDomainNotFound:
		for i := range in.domains {
			if in.domains[i].Namespace == link.Namespace && in.domains[i].DeletionTimestamp == nil {
				// The same words whoever holds the hostname (another
				// workspace, or nobody while a contested claim waits for
				// its TXT record): a change elsewhere need not rewrite it.
				return fmt.Sprintf("Domain %s does not own its hostname: its Ready condition says why and which TXT record to publish", link.Spec.Domain)
			}
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
