package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// DomainSpec is a hostname that short links are served on.
type DomainSpec struct {
	// domain is the hostname, lowercase (international names in punycode).
	// A hostname belongs to one namespace: a claim proven by its TXT
	// record outranks every other, and otherwise the oldest uncontested
	// claim wins (see status.claim); the others report DomainClaimed or
	// TXTRequired and are never served.
	// +required
	Domain Hostname `json:"domain"`

	// notFoundURL is where visitors go for an unknown key and for the root
	// of the domain. Unset, they get 404.
	// +optional
	NotFoundURL *URL `json:"notFoundURL,omitempty"`

	// expiredURL is where visitors of an expired link go when the link has no
	// expiredRedirectURL of its own. Unset, they get 410 Gone.
	// +optional
	ExpiredURL *URL `json:"expiredURL,omitempty"`
}

// DomainPhase is the DNS verification state of a Domain.
// +kubebuilder:validation:Enum=Pending;Active
type DomainPhase string

const (
	// DomainPending: DNS does not prove the domain is ours yet.
	DomainPending DomainPhase = "Pending"
	// DomainActive: the challenge record or a redirect target was found.
	DomainActive DomainPhase = "Active"
)

// DNSRecord is a record to publish in DNS.
type DNSRecord struct {
	// name is the fully qualified record name.
	// +required
	Name string `json:"name"`
	// type is the record type, e.g. TXT.
	// +required
	Type string `json:"type"`
	// value is the record's content.
	// +required
	Value string `json:"value"`
}

// DomainClaim records since when a Domain claims a hostname.
type DomainClaim struct {
	// hostname is the spec.domain the claim is for. A claim whose hostname
	// is not the current spec.domain is stale: the Domain claims nothing
	// until the controller records a new claim.
	// +required
	// +kubebuilder:validation:MaxLength=253
	Hostname string `json:"hostname"`

	// since is when the Domain started claiming hostname, with
	// microseconds: its creation, or the edit of spec.domain to hostname.
	// +required
	Since metav1.MicroTime `json:"since"`

	// contested is true when the claim began while another workspace held
	// the hostname. Kept for good for this claim: a contested claim can own
	// the hostname only with TXT proof, even after the other workspace's
	// Domain is gone, so a squatter never inherits a hostname.
	// +optional
	Contested bool `json:"contested,omitempty"`

	// proof is what DNS proved for this claim: TXT (the challenge record
	// holds this Domain's value) or Target (the hostname points at a
	// redirect target, which proves DNS points at kurz, not which
	// workspace). Empty when nothing was proven yet.
	// +optional
	Proof DomainProof `json:"proof,omitempty"`

	// txtAbsentChecks counts the consecutive checks that found the TXT
	// record definitively absent while proof was TXT; a failed lookup does
	// not count. TXT proof is lost when it reaches 2.
	// +optional
	// +kubebuilder:validation:Minimum=0
	TXTAbsentChecks int32 `json:"txtAbsentChecks,omitempty"`

	// decidedAt is when kurz last decided contested for this claim, by the
	// rule that counts a Domain not reconciled yet from its creation. A
	// claim without it was recorded by an earlier kurz, whose contested
	// flag could be wrong when the controller was behind: it is decided
	// again once, and then kept.
	// +optional
	DecidedAt *metav1.MicroTime `json:"decidedAt,omitempty"`
}

// DomainProof is what DNS proved about a claim.
// +kubebuilder:validation:Enum=TXT;Target
type DomainProof string

const (
	// ProofNone: DNS proved nothing yet.
	ProofNone DomainProof = ""
	// ProofTXT: the challenge TXT record holds the Domain's value, which is
	// unique to its workspace and hostname.
	ProofTXT DomainProof = "TXT"
	// ProofTarget: the hostname points (CNAME, A or AAAA) at a redirect
	// target. Enough for an uncontested claim only.
	ProofTarget DomainProof = "Target"
)

// DomainTLS is what kurz observed about HTTPS for a Domain's hostname.
type DomainTLS struct {
	// ingress is the name of the Ingress routing the hostname, in kurz's
	// own namespace; empty while there is none.
	// +optional
	Ingress string `json:"ingress,omitempty"`

	// httpRoute is the name of the HTTPRoute sending the hostname to the
	// redirect Service, in kurz's own namespace (Gateway API only).
	// +optional
	HTTPRoute string `json:"httpRoute,omitempty"`

	// gateway is the Gateway ("namespace/name") whose listener serves the
	// hostname: one of kurz's own (--gateway-class), or the shared Gateway
	// kurz's ListenerSet is attached to (--gateway). Empty while there is
	// none.
	// +optional
	Gateway string `json:"gateway,omitempty"`

	// listenerSet is the ListenerSet, in kurz's own namespace, holding the
	// hostname's listener (--gateway only).
	// +optional
	ListenerSet string `json:"listenerSet,omitempty"`

	// listener is the name of the hostname's HTTPS listener in gateway or
	// listenerSet; empty while it does not exist.
	// +optional
	Listener string `json:"listener,omitempty"`

	// secretName is the Secret, in kurz's own namespace, that holds (or
	// will hold) the hostname's certificate.
	// +optional
	SecretName string `json:"secretName,omitempty"`

	// notAfter is when the certificate in secretName expires; unset while
	// the Secret holds no certificate valid for the hostname.
	// +optional
	NotAfter *metav1.Time `json:"notAfter,omitempty"`
}

// DomainStatus is what kurz observed about a Domain.
type DomainStatus struct {
	// claim is the hostname this Domain claims and since when, set by the
	// controller. Of several Domains with one hostname, the one with the
	// oldest current claim holds it; so editing spec.domain to another
	// workspace's hostname never takes it over, however old the Domain.
	// +optional
	Claim *DomainClaim `json:"claim,omitempty"`

	// phase is Pending until DNS proves the domain, then Active.
	// +optional
	Phase DomainPhase `json:"phase,omitempty"`

	// verificationToken is the value the challenge TXT record must hold,
	// derived from the workspace (namespace uid) and the hostname: the same
	// for a Domain deleted and created again in the same namespace, unique
	// to it otherwise. Not a secret (it is published in DNS).
	// +optional
	VerificationToken string `json:"verificationToken,omitempty"`

	// record is the DNS record to publish to verify the domain.
	// +optional
	Record *DNSRecord `json:"record,omitempty"`

	// lastCheckTime is when DNS was last queried.
	// +optional
	LastCheckTime *metav1.Time `json:"lastCheckTime,omitempty"`

	// createdAt is when the domain was created, with microseconds.
	// +optional
	CreatedAt *metav1.MicroTime `json:"createdAt,omitempty"`

	// updatedAt is when the spec last changed, with microseconds.
	// +optional
	UpdatedAt *metav1.MicroTime `json:"updatedAt,omitempty"`

	// updatedGeneration is the metadata.generation updatedAt was stamped for.
	// +optional
	UpdatedGeneration int64 `json:"updatedGeneration,omitempty"`

	// observedGeneration is the metadata.generation the controller last
	// reconciled without error; 0 until its first pass (the default, so
	// kstatus and Flux read a new object as in progress, not as current).
	// +optional
	// +kubebuilder:default=0
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// tls is where HTTPS for the hostname stands, when kurz manages its
	// routing (--ingress-class); unset otherwise.
	// +optional
	TLS *DomainTLS `json:"tls,omitempty"`

	// conditions describe the domain's state: Ready (True when Active),
	// Reconciling (waiting for DNS) and Stalled (its hostname held by
	// another Domain), in the kstatus shape GitOps tools read. TLSReady
	// (only with --ingress-class, --gateway-class or --gateway) is True
	// when the hostname has its Ingress or Gateway listener and a
	// certificate valid for it.
	// +optional
	// +listType=map
	// +listMapKey=type
	// +patchStrategy=merge
	// +patchMergeKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty" patchStrategy:"merge" patchMergeKey:"type"`
}

// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=dom,categories=kurz
// +kubebuilder:printcolumn:name="Domain",type=string,JSONPath=`.spec.domain`
// +kubebuilder:printcolumn:name="Status",type=string,JSONPath=`.status.phase`
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Reason",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].reason`
// +kubebuilder:printcolumn:name="TLS",type=string,JSONPath=`.status.conditions[?(@.type=="TLSReady")].status`
// +kubebuilder:printcolumn:name="TLS Reason",type=string,JSONPath=`.status.conditions[?(@.type=="TLSReady")].reason`,priority=1
// +kubebuilder:printcolumn:name="Cert Expires",type=string,JSONPath=`.status.tls.notAfter`,priority=1
// +kubebuilder:printcolumn:name="Proof",type=string,JSONPath=`.status.claim.proof`,priority=1
// +kubebuilder:printcolumn:name="Contested",type=boolean,JSONPath=`.status.claim.contested`,priority=1
// +kubebuilder:printcolumn:name="TXT Record",type=string,JSONPath=`.status.record.name`
// +kubebuilder:printcolumn:name="TXT Value",type=string,JSONPath=`.status.record.value`,priority=1
// +kubebuilder:printcolumn:name="Message",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].message`,priority=1
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`

// Domain is a hostname of a workspace (namespace) that serves short links.
type Domain struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec is the desired domain.
	// +required
	Spec DomainSpec `json:"spec"`

	// status is what kurz observed. Defaulted to an empty status, so that
	// observedGeneration (0) reads behind metadata.generation until the
	// controller's first pass.
	// +optional
	// +kubebuilder:default={}
	Status DomainStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// DomainList is a list of Domains.
type DomainList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Domain `json:"items"`
}
