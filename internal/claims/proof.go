package claims

import (
	"crypto/sha256"
	"encoding/hex"

	"k8s.io/apimachinery/pkg/types"

	kurzv1alpha1 "github.com/kurz-dev/kurz/api/v1alpha1"
)

// TXTLossChecks is how many consecutive checks must find the TXT record
// definitively absent before a claim loses its TXT proof: one missing answer
// (a zone being re-deployed, a stale secondary) does not move a hostname.
const TXTLossChecks = 2

// ChallengeValue is the value the TXT record _kurz-challenge.<hostname> must
// hold to prove a Domain of the namespace with uid namespaceUID. It is
// stable, so a Domain deleted and created again in the same namespace (a
// GitOps prune, `kubectl replace --force`) is proven by the record already
// published; and it differs for every other namespace, including one
// created again under the same name (a new uid). It is a hash of public
// facts, not a secret: it is published in DNS anyway.
func ChallengeValue(namespaceUID types.UID, hostname string) string {
	h := sha256.New()
	h.Write([]byte("kurz.dev/challenge/v1\x00"))
	h.Write([]byte(namespaceUID))
	h.Write([]byte{0})
	h.Write([]byte(hostname))
	return "kurz-" + hex.EncodeToString(h.Sum(nil)[:16])
}

// SetChallenge sets d's verification token and challenge record for its
// hostname and namespace, and reports whether the token changed. The value
// is always derived, never trusted from status.
func SetChallenge(d *kurzv1alpha1.Domain, namespaceUID types.UID) bool {
	value := ChallengeValue(namespaceUID, string(d.Spec.Domain))
	changed := d.Status.VerificationToken != value
	d.Status.VerificationToken = value
	d.Status.Record = &kurzv1alpha1.DNSRecord{
		Name:  kurzv1alpha1.ChallengeRecordPrefix + string(d.Spec.Domain),
		Type:  "TXT",
		Value: value,
	}
	return changed
}

// Check is the outcome of one DNS lookup for a proof.
type Check int

const (
	// CheckFailed: the lookup failed (timeout, SERVFAIL): it proves nothing
	// either way, so it changes nothing.
	CheckFailed Check = iota
	// CheckFound: the record is there.
	CheckFound
	// CheckAbsent: the record is definitively absent (NXDOMAIN, no such
	// record, or a record without the value).
	CheckAbsent
)

// Observe updates a current claim's proof with one DNS check: txt for the
// challenge record, target for the redirect targets. TXT proof outlasts
// TXTLossChecks-1 definitive absences and any failed lookup; target proof
// is dropped on a definitive absence only.
func Observe(c *kurzv1alpha1.DomainClaim, txt, target Check) {
	switch txt {
	case CheckFound:
		c.Proof, c.TXTAbsentChecks = kurzv1alpha1.ProofTXT, 0
		return
	case CheckAbsent:
		if c.Proof == kurzv1alpha1.ProofTXT {
			c.TXTAbsentChecks++
			if c.TXTAbsentChecks < TXTLossChecks {
				return
			}
			c.Proof, c.TXTAbsentChecks = kurzv1alpha1.ProofNone, 0
		}
	case CheckFailed:
		if c.Proof == kurzv1alpha1.ProofTXT {
			return
		}
	}
	switch target {
	case CheckFound:
		c.Proof = kurzv1alpha1.ProofTarget
	case CheckAbsent:
		if c.Proof == kurzv1alpha1.ProofTarget {
			c.Proof = kurzv1alpha1.ProofNone
		}
	}
}

// Proven reports whether a claim's proof makes its Domain Active when it
// owns the hostname: TXT, or a redirect target for an uncontested claim.
func Proven(c *kurzv1alpha1.DomainClaim) bool {
	return c != nil && (c.Proof == kurzv1alpha1.ProofTXT || (c.Proof == kurzv1alpha1.ProofTarget && !c.Contested))
}
