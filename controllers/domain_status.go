package controllers

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"os"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"

	kurzv1alpha1 "github.com/kurz-dev/kurz/api/v1alpha1"
	"github.com/kurz-dev/kurz/internal/claims"
	"github.com/kurz-dev/kurz/internal/dns"
	"github.com/kurz-dev/kurz/internal/timestamps"
)

// setStatus computes d's status; claimants are the Domains of every
// namespace with d's hostname. It checks DNS only when a check is due, so a
// reconcile caused by anything else changes nothing. lock reports that the
// pass stamped timestamps or minted the token, which must be written under
// an optimistic lock. On a failed DNS check d keeps its phase and the check
// is retried on schedule (observedGeneration stays behind).
func (r *DomainReconciler) setStatus(ctx context.Context, d *kurzv1alpha1.Domain, claimants []kurzv1alpha1.Domain, now time.Time) (ctrl.Result, bool, error) {
	lock := timestamps.StampDomain(d, now)
	if d.Status.VerificationToken == "" {
		token, err := newToken()
		if err != nil {
			return ctrl.Result{}, false, err
		}
		d.Status.VerificationToken = token
		lock = true
	}
	if recordClaim(d, now) {
		lock = true
	}
	d.Status.Record = &kurzv1alpha1.DNSRecord{
		Name:  kurzv1alpha1.ChallengeRecordPrefix + string(d.Spec.Domain),
		Type:  "TXT",
		Value: d.Status.VerificationToken,
	}

	if owner := claims.DomainOwner(withSelf(claimants, d)); owner != nil && (owner.Namespace != d.Namespace || owner.Name != d.Name) {
		// Never Active, never checked: it waits for the owner to go,
		// which the watch on Domains tells us.
		d.Status.Phase = kurzv1alpha1.DomainPending
		setDomainReady(d, kurzv1alpha1.ReasonDomainClaimed, claimedMessage(d, owner))
		d.Status.ObservedGeneration = d.Generation
		return ctrl.Result{}, lock, nil
	}

	if !r.Schedule.checkDue(d, now) {
		return ctrl.Result{RequeueAfter: r.Schedule.nextCheck(d).Sub(now)}, lock, nil
	}
	res, err := r.Verifier.Verify(ctx, string(d.Spec.Domain), d.Status.VerificationToken)
	// Second precision is what the API stores; truncating keeps an
	// unchanged result within the same second from being a write.
	t := metav1.NewTime(now.Truncate(time.Second))
	d.Status.LastCheckTime = &t
	if err != nil {
		// A failed check is a completed check: the next one follows the
		// schedule. Returning the error instead would have the work queue
		// retry at once, each retry holding a worker for the DNS timeout.
		// A DNS outage proves nothing, so the phase stays; observedGeneration
		// stays behind, so the next pass checks again whatever the schedule.
		ctrl.LoggerFrom(ctx).Info("DNS check failed", "domain", d.Spec.Domain, "error", err.Error())
		if d.Status.Phase == kurzv1alpha1.DomainActive {
			setDomainReady(d, kurzv1alpha1.ReasonVerified, checkFailedMessage(err, "the domain stays Active"))
		} else {
			d.Status.Phase = kurzv1alpha1.DomainPending
			setDomainReady(d, kurzv1alpha1.ReasonVerificationPending, checkFailedMessage(err, pendingMessage(d)))
		}
		return ctrl.Result{RequeueAfter: r.Schedule.interval(d)}, lock, nil
	}
	if res.Verified() {
		d.Status.Phase = kurzv1alpha1.DomainActive
		setDomainReady(d, kurzv1alpha1.ReasonVerified, verifiedMessage(d, res))
	} else {
		d.Status.Phase = kurzv1alpha1.DomainPending
		setDomainReady(d, kurzv1alpha1.ReasonVerificationPending, pendingMessage(d))
	}
	d.Status.ObservedGeneration = d.Generation
	return ctrl.Result{RequeueAfter: r.Schedule.interval(d)}, lock, nil
}

// recordClaim sets status.claim when d has no current claim, and reports
// whether it did: minted once, like the token, so the write takes the
// optimistic lock. The claim starts now, as the hostname was just set or
// changed; except for a Domain never claimed and never edited (generation
// 1), which has claimed its hostname since its creation: so Domains created
// before claims were recorded keep their order.
func recordClaim(d *kurzv1alpha1.Domain, now time.Time) bool {
	if _, ok := claims.ClaimSince(d); ok {
		return false
	}
	since := metav1.NewMicroTime(now.Truncate(time.Microsecond))
	if d.Status.Claim == nil && d.Generation == 1 && !d.CreationTimestamp.IsZero() {
		since = metav1.NewMicroTime(d.CreationTimestamp.Time)
	}
	d.Status.Claim = &kurzv1alpha1.DomainClaim{Hostname: string(d.Spec.Domain), Since: since}
	return true
}

// withSelf returns claimants with d's entry replaced by d as this pass sees
// it (its claim just recorded), or added when the cache did not list it yet.
func withSelf(claimants []kurzv1alpha1.Domain, d *kurzv1alpha1.Domain) []kurzv1alpha1.Domain {
	out := make([]kurzv1alpha1.Domain, 0, len(claimants)+1)
	for i := range claimants {
		if claimants[i].Namespace != d.Namespace || claimants[i].Name != d.Name {
			out = append(out, claimants[i])
		}
	}
	return append(out, *d)
}

func setDomainReady(d *kurzv1alpha1.Domain, reason, message string) {
	status := metav1.ConditionFalse
	if reason == kurzv1alpha1.ReasonVerified {
		status = metav1.ConditionTrue
	}
	meta.SetStatusCondition(&d.Status.Conditions, metav1.Condition{
		Type:               kurzv1alpha1.ConditionReady,
		Status:             status,
		Reason:             reason,
		Message:            message,
		ObservedGeneration: d.Generation,
	})
}

// newToken returns 128 random bits, hex-encoded: unguessable, so nobody can
// publish a domain's record before the Domain exists.
func newToken() (string, error) {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("generate verification token: %w", err)
	}
	return "kurz-" + hex.EncodeToString(b), nil
}

// The messages name records, not the token: it is in status.record.

func pendingMessage(d *kurzv1alpha1.Domain) string {
	return fmt.Sprintf("Publish the TXT record %s with the value in status.record, or point %s (CNAME, A or AAAA) at a redirect target",
		d.Status.Record.Name, d.Spec.Domain)
}

func verifiedMessage(d *kurzv1alpha1.Domain, res dns.Result) string {
	switch res.Method {
	case dns.MethodTXT:
		return fmt.Sprintf("TXT record %s holds the verification token", d.Status.Record.Name)
	case dns.MethodCNAME:
		return fmt.Sprintf("%s is a CNAME of the redirect target %s", d.Spec.Domain, res.Target)
	default:
		return fmt.Sprintf("%s resolves to the redirect target %s", d.Spec.Domain, res.Target)
	}
}

// checkFailedMessage says a DNS check failed and why, briefly: the
// resolver's error (server addresses, every name tried) goes to the log.
func checkFailedMessage(err error, then string) string {
	cause := "the DNS lookup failed"
	if dnsErr := (*net.DNSError)(nil); errors.As(err, &dnsErr) && dnsErr.IsTimeout {
		cause = "DNS did not answer in time"
	} else if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, os.ErrDeadlineExceeded) {
		cause = "DNS did not answer in time"
	}
	return fmt.Sprintf("The last DNS check failed (%s), it is retried on schedule; %s", cause, then)
}

// claimedMessage never names another namespace's Domain.
func claimedMessage(d, owner *kurzv1alpha1.Domain) string {
	if owner.Namespace == d.Namespace {
		return fmt.Sprintf("Domain %s, which is older, holds the hostname %s", owner.Name, d.Spec.Domain)
	}
	return fmt.Sprintf("The hostname %s is held by an older Domain of another workspace", d.Spec.Domain)
}
