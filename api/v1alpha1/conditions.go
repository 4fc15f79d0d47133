package v1alpha1

// Condition types. Both kinds carry all three, in the shape kstatus
// (sigs.k8s.io/cli-utils/pkg/kstatus) and Flux read, so GitOps tools tell a
// settled object from one waiting on the world and from one that waits for a
// person: see the package documentation for the state of every reason.
const (
	// ConditionReady is True when the object is in the state its spec asks
	// for: a Link serves its destination or, once expired, its expiry
	// behaviour; a Domain owns its hostname and DNS proves it.
	ConditionReady = "Ready"
	// ConditionReconciling is True while the object waits on the world (DNS,
	// a Domain not created yet) and will settle without anyone editing it.
	// It is absent otherwise (kstatus reads it as abnormal-true).
	ConditionReconciling = "Reconciling"
	// ConditionStalled is True when only a change of this object's spec or
	// the removal of another object can settle it. Absent otherwise.
	ConditionStalled = "Stalled"
)

// Reasons of a Link's conditions.
const (
	// ReasonActive: the link serves its destination (Ready=True).
	ReasonActive = "Active"
	// ReasonDomainNotFound: no Domain in the link's namespace holds its
	// hostname (Ready=False). Reconciling while that namespace has no such
	// Domain or its Domain waits for TXT proof; Stalled (reason
	// DomainClaimed) while a Domain of another workspace, or an older one,
	// holds the hostname.
	ReasonDomainNotFound = "DomainNotFound"
	// ReasonKeyConflict: an older Link in the namespace has the same domain
	// and key; this one serves once that one goes away (Ready=False,
	// Stalled).
	ReasonKeyConflict = "KeyConflict"
	// ReasonExpired: expiresAt has passed and visitors go to the expiry
	// target, as the spec asks (Ready=True: a settled end state).
	ReasonExpired = "Expired"
)

// Reasons of a Domain's conditions.
const (
	// ReasonVerified: DNS proves the domain (phase Active, Ready=True).
	ReasonVerified = "Verified"
	// ReasonVerificationPending: the Domain owns its hostname but DNS does
	// not prove it yet (phase Pending, Ready=False, Reconciling); the
	// condition message says which record to publish.
	ReasonVerificationPending = "VerificationPending"
	// ReasonDomainClaimed: another Domain holds the hostname (proven by
	// TXT, or an older uncontested claim); this one is not served until it
	// publishes its TXT record or the holder goes away (Ready=False,
	// Stalled). On a Link's Stalled condition: the hostname of its Domain
	// is held by such another Domain.
	ReasonDomainClaimed = "DomainClaimed"
	// ReasonTXTRequired: the claim is contested (it began while another
	// workspace held the hostname), so only its TXT record can make it the
	// owner; nothing else holds the hostname meanwhile (Ready=False,
	// Reconciling: waiting for DNS). On a Link's Reconciling condition: its
	// Domain waits so.
	ReasonTXTRequired = "TXTRequired"
)

// IsWarning reports whether reason is a state that needs someone's
// attention: its events are Warnings, the others Normal.
func IsWarning(reason string) bool {
	switch reason {
	case ReasonDomainNotFound, ReasonKeyConflict, ReasonDomainClaimed, ReasonCertificateInvalid,
		ReasonDeliveryFailing, ReasonSecretNotFound, ReasonSecretInvalid, ReasonURLRefused, ReasonReceiverGone:
		return true
	}
	return false
}

// ChallengeRecordPrefix is prepended to a hostname to name the TXT record
// that proves ownership: _kurz-challenge.<domain>.
const ChallengeRecordPrefix = "_kurz-challenge."

// ConditionTLSReady is a Domain's HTTPS condition, set only when kurz
// manages routing (--ingress-class, --gateway-class or --gateway): True when
// the hostname's Ingress, or its HTTPS listener in a Gateway or ListenerSet,
// exists and its Secret holds a certificate valid for the hostname.
const ConditionTLSReady = "TLSReady"

// Reasons of a Domain's TLSReady condition, in the order they are checked.
const (
	// ReasonRoutePending: no Ingress or Gateway listener routes the
	// hostname, because the Domain does not hold it or is not Active (yet),
	// or an object kurz does not own is in the way.
	ReasonRoutePending = "RoutePending"
	// ReasonCertificateNotReady: cert-manager's Certificate for the Secret
	// is not Ready; the message is the Certificate's.
	ReasonCertificateNotReady = "CertificateNotReady"
	// ReasonSecretMissing: the Secret does not exist or holds no
	// certificate yet.
	ReasonSecretMissing = "SecretMissing"
	// ReasonCertificateInvalid: the Secret's certificate does not cover the
	// hostname, cannot be parsed, or has expired.
	ReasonCertificateInvalid = "CertificateInvalid"
	// ReasonCertificateValid: the route exists and the Secret holds a
	// certificate valid for the hostname (status.tls.notAfter).
	ReasonCertificateValid = "CertificateValid"
)

// Reasons of a Webhook's conditions.
const (
	// ReasonSubscribed: the Secret and the URL are fine and the latest
	// delivery attempt, if any, succeeded (Ready=True).
	ReasonSubscribed = "Subscribed"
	// ReasonDeliveryFailing: the latest delivery attempt failed (an answer
	// other than 2xx, a timeout, a network error); retries go on and the
	// next success settles it (Ready=False, Reconciling). status.lastError
	// says why.
	ReasonDeliveryFailing = "DeliveryFailing"
	// ReasonSecretNotFound: spec.secretRef names no Secret of the namespace
	// carrying the label kurz.dev/webhook-signing: "true", or the Secret
	// has no such key (Ready=False, Stalled). Nothing is sent meanwhile.
	ReasonSecretNotFound = "SecretNotFound"
	// ReasonSecretInvalid: the Secret's value is not a Standard Webhooks
	// secret ("whsec_" and the base64 of 24 to 64 bytes) (Ready=False,
	// Stalled). Nothing is sent meanwhile.
	ReasonSecretInvalid = "SecretInvalid"
	// ReasonURLRefused: spec.url leads to an address kurz refuses to
	// connect to (loopback, link-local or metadata, private, CGNAT, ...),
	// or is a Service the manager's flags do not allow (Ready=False,
	// Stalled). Events for it are dropped and counted.
	ReasonURLRefused = "URLRefused"
	// ReasonReceiverGone: the receiver answered 410 Gone, which asks
	// senders to stop (Ready=False, Stalled); the event is not retried.
	ReasonReceiverGone = "ReceiverGone"
)
