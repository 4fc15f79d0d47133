package controllers

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"

	kurzv1alpha1 "github.com/kurz-dev/kurz/api/v1alpha1"
	"github.com/kurz-dev/kurz/internal/claims"
	"github.com/kurz-dev/kurz/internal/dns"
	"github.com/kurz-dev/kurz/internal/timestamps"
)

// setStatus computes d's status; claimants are the Domains of every
// namespace with d's hostname, namespaceUID the uid of d's namespace (the
// challenge value derives from it). It checks DNS only when a check is due,
// so a reconcile caused by anything else changes nothing; every Domain is
// checked, owner or not, as its TXT record can move the hostname to it.
// On a failed DNS check the proof stays and the check is retried on
// schedule (observedGeneration stays behind). What it stamps once (times,
// token, the claim) needs no lock of its own: every Domain status patch
// carries its resourceVersion (computeStatus).
func (r *DomainReconciler) setStatus(ctx context.Context, d *kurzv1alpha1.Domain, claimants []kurzv1alpha1.Domain, namespaceUID types.UID, now time.Time) ctrl.Result {
	timestamps.StampDomain(d, now)
	claims.SetChallenge(d, namespaceUID)
	// Begin a claim, or decide again whether the current one is contested
	// (claims recorded by an earlier kurz heal here).
	if !claims.Begin(d, claimants, now) {
		claims.Review(d, claimants, now)
	}

	result := ctrl.Result{}
	var checkErr error
	if r.Schedule.checkDue(d, now) {
		res, err := r.Verifier.Verify(ctx, string(d.Spec.Domain), d.Status.VerificationToken)
		if errors.Is(err, dns.ErrZoneBusy) {
			// Other workers are checking this zone (maybe stuck on it):
			// come back shortly without holding a worker or writing.
			r.setOwnership(d, claimants, nil, false)
			return ctrl.Result{RequeueAfter: zoneBusyRetry}
		}
		// Second precision is what the API stores; truncating keeps an
		// unchanged result within the same second from being a write.
		t := metav1.NewTime(now.Truncate(time.Second))
		d.Status.LastCheckTime = &t
		claims.Observe(d.Status.Claim, txtCheck(res), targetCheck(res, err))
		if err != nil {
			// A failed check is a completed check: the next one follows the
			// schedule. Returning the error instead would have the work
			// queue retry at once, each retry holding a worker for the DNS
			// timeout. A DNS outage proves nothing, so the proof stays;
			// observedGeneration stays behind, so the next pass checks
			// again whatever the schedule.
			ctrl.LoggerFrom(ctx).Info("DNS check failed", "domain", d.Spec.Domain, "error", err.Error())
			checkErr = err
		} else {
			d.Status.ObservedGeneration = d.Generation
		}
		r.setOwnership(d, claimants, checkErr, true)
		return ctrl.Result{RequeueAfter: r.Schedule.interval(d)}
	}
	r.setOwnership(d, claimants, nil, false)
	if d.Status.LastCheckTime != nil {
		result.RequeueAfter = r.Schedule.nextCheck(d).Sub(now)
	}
	return result
}

// zoneBusyRetry is how soon a Domain whose zone was busy is tried again: a
// check frees its slot within the DNS timeout, usually far sooner.
const zoneBusyRetry = time.Second

// setOwnership sets d's phase and conditions from who owns its hostname
// (claims.DomainOwner, with d as this pass sees it). checked says this pass
// asked DNS; checkErr is that check's failure. Without a check the last
// message stays when nothing it says changed.
func (r *DomainReconciler) setOwnership(d *kurzv1alpha1.Domain, claimants []kurzv1alpha1.Domain, checkErr error, checked bool) {
	rd := domainReadiness(d, claims.DomainOwner(withSelf(claimants, d)))
	d.Status.Phase = kurzv1alpha1.DomainPending
	if rd.progress == settled {
		d.Status.Phase = kurzv1alpha1.DomainActive
	}
	// The messages of an owner speak of its last DNS check: a pass that
	// did not check keeps them (a failed check's words included).
	if rd.reason == kurzv1alpha1.ReasonVerified || rd.reason == kurzv1alpha1.ReasonVerificationPending {
		switch {
		case checkErr != nil && rd.progress == settled:
			rd.message = checkFailedMessage(checkErr, "the domain stays Active")
		case checkErr != nil:
			rd.message = checkFailedMessage(checkErr, rd.message)
		case !checked:
			if c := readyWith(d, rd.reason); c != nil {
				rd.message = c.Message
			}
		}
	}
	setReadiness(d, rd)
}

// domainReadiness says how d's state reads (see the api package docs),
// owner being the Domain that holds its hostname (nil: none can): owned
// and proven is settled; owned and unproven waits for DNS, and so does a
// contested claim nobody holds (only its TXT record can settle it);
// another Domain holding the hostname stalls it.
func domainReadiness(d, owner *kurzv1alpha1.Domain) readiness {
	owns := owner != nil && owner.Namespace == d.Namespace && owner.Name == d.Name
	switch {
	case owns && claims.Proven(d.Status.Claim):
		return readiness{progress: settled, reason: kurzv1alpha1.ReasonVerified, message: verifiedMessage(d)}
	case owns:
		return readiness{progress: waiting, reason: kurzv1alpha1.ReasonVerificationPending, message: pendingMessage(d)}
	case owner == nil:
		return readiness{progress: waiting, reason: kurzv1alpha1.ReasonTXTRequired, message: txtRequiredMessage(d)}
	}
	return readiness{progress: stalled, reason: kurzv1alpha1.ReasonDomainClaimed, message: claimedMessage(d, owner)}
}

// readyWith returns d's Ready condition when it has reason for d's
// generation already, else nil.
func readyWith(d *kurzv1alpha1.Domain, reason string) *metav1.Condition {
	c := meta.FindStatusCondition(d.Status.Conditions, kurzv1alpha1.ConditionReady)
	if c == nil || c.Reason != reason || c.ObservedGeneration != d.Generation {
		return nil
	}
	return c
}

// txtCheck and targetCheck say what one verification learned about each
// proof: a failed lookup (err) is never taken for an absent record.
func txtCheck(res dns.Result) claims.Check {
	switch {
	case res.Method == dns.MethodTXT:
		return claims.CheckFound
	case res.TXTAbsent:
		return claims.CheckAbsent
	}
	return claims.CheckFailed
}

func targetCheck(res dns.Result, err error) claims.Check {
	switch {
	case res.Method == dns.MethodCNAME || res.Method == dns.MethodAddress:
		return claims.CheckFound
	case res.Method == dns.MethodNone && err == nil:
		return claims.CheckAbsent
	}
	return claims.CheckFailed
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

// The messages name records, not the token: it is in status.record.

func pendingMessage(d *kurzv1alpha1.Domain) string {
	return fmt.Sprintf("Publish the TXT record %s with the value in status.record, or point %s (CNAME, A or AAAA) at a redirect target",
		d.Status.Record.Name, d.Spec.Domain)
}

func verifiedMessage(d *kurzv1alpha1.Domain) string {
	if d.Status.Claim.Proof == kurzv1alpha1.ProofTXT {
		return fmt.Sprintf("TXT record %s holds the verification token", d.Status.Record.Name)
	}
	return fmt.Sprintf("%s points at a redirect target (CNAME, A or AAAA)", d.Spec.Domain)
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

// claimedMessage says who holds the hostname, never naming another
// namespace's Domain, and what moves it here. The TXT value is public (it
// is for DNS), so the message gives it whole.
func claimedMessage(d, owner *kurzv1alpha1.Domain) string {
	holder := "an older Domain of another workspace"
	if owner.Namespace == d.Namespace {
		holder = fmt.Sprintf("Domain %s, which is older,", owner.Name)
	}
	if claims.ClaimOf(owner).Proof == kurzv1alpha1.ProofTXT {
		holder = "a Domain of another workspace proven by its TXT record"
		if owner.Namespace == d.Namespace {
			holder = fmt.Sprintf("Domain %s, proven by its TXT record,", owner.Name)
		}
	}
	return fmt.Sprintf("The hostname %s is held by %s; publish the TXT record %s with the value %s to move it to this Domain",
		d.Spec.Domain, holder, d.Status.Record.Name, d.Status.Record.Value)
}

// txtRequiredMessage: a contested claim nobody else holds.
func txtRequiredMessage(d *kurzv1alpha1.Domain) string {
	return fmt.Sprintf("This Domain claimed %s while another workspace held it, so only TXT proves it: publish the TXT record %s with the value %s",
		d.Spec.Domain, d.Status.Record.Name, d.Status.Record.Value)
}
