package v1alpha1

// ConditionReady is the one condition both kinds carry. For a Link it says
// whether the link serves; for a Domain, whether DNS proves it.
const ConditionReady = "Ready"

// Reasons of a Link's Ready condition.
const (
	// ReasonActive: the link serves its destination.
	ReasonActive = "Active"
	// ReasonDomainNotFound: no Domain in the link's namespace has its
	// hostname, or that Domain's hostname is claimed by another namespace.
	ReasonDomainNotFound = "DomainNotFound"
	// ReasonKeyConflict: an older Link in the namespace has the same domain
	// and key; this one serves once that one goes away.
	ReasonKeyConflict = "KeyConflict"
	// ReasonExpired: expiresAt has passed; visitors go to the expiry target.
	ReasonExpired = "Expired"
)

// Reasons of a Domain's Ready condition.
const (
	// ReasonVerified: DNS proves the domain (phase Active).
	ReasonVerified = "Verified"
	// ReasonVerificationPending: DNS does not prove the domain yet (phase
	// Pending); the condition message says which record to publish.
	ReasonVerificationPending = "VerificationPending"
	// ReasonDomainClaimed: another Domain holds the hostname (proven by
	// TXT, or an older uncontested claim); this one is not served until it
	// publishes its TXT record or the holder goes away (uncontested only).
	ReasonDomainClaimed = "DomainClaimed"
	// ReasonTXTRequired: the claim is contested (it began while another
	// workspace held the hostname), so only its TXT record can make it the
	// owner; nothing else holds the hostname meanwhile.
	ReasonTXTRequired = "TXTRequired"
)

// ChallengeRecordPrefix is prepended to a hostname to name the TXT record
// that proves ownership: _kurz-challenge.<domain>.
const ChallengeRecordPrefix = "_kurz-challenge."

// ConditionTLSReady is a Domain's HTTPS condition, set only when kurz
// manages routing (--ingress-class): True when the hostname's Ingress exists
// and its Secret holds a certificate valid for the hostname.
const ConditionTLSReady = "TLSReady"

// Reasons of a Domain's TLSReady condition, in the order they are checked.
const (
	// ReasonRoutePending: no Ingress routes the hostname, because the
	// Domain does not hold it or is not Active (yet).
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
	// ReasonCertificateValid: the Ingress exists and the Secret holds a
	// certificate valid for the hostname (status.tls.notAfter).
	ReasonCertificateValid = "CertificateValid"
)
