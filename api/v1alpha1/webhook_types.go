package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// WebhookEvent is a kind of event a Webhook subscribes to. The list is in
// the enum below and in WebhookEvents; the payload of each is in
// docs/webhooks.md.
// +kubebuilder:validation:Enum=link.created;link.updated;link.deleted;link.clicked;link.expired;link.conflict;domain.verified;domain.unverified;domain.tls_ready
type WebhookEvent string

// The events a Webhook can subscribe to.
const (
	// EventLinkCreated: the Link controller reconciled a new Link for the
	// first time.
	EventLinkCreated WebhookEvent = "link.created"
	// EventLinkUpdated: a Link's spec changed (a new generation); status
	// changes (clicks, conditions) never send it.
	EventLinkUpdated WebhookEvent = "link.updated"
	// EventLinkDeleted: a Link was deleted.
	EventLinkDeleted WebhookEvent = "link.deleted"
	// EventLinkClicked: visitors followed Links; sent in batches by every
	// redirect server.
	EventLinkClicked WebhookEvent = "link.clicked"
	// EventLinkExpired: a Link's Ready reason became Expired.
	EventLinkExpired WebhookEvent = "link.expired"
	// EventLinkConflict: a Link's Ready reason became KeyConflict.
	EventLinkConflict WebhookEvent = "link.conflict"
	// EventDomainVerified: a Domain's phase became Active.
	EventDomainVerified WebhookEvent = "domain.verified"
	// EventDomainUnverified: a Domain's phase went from Active back to
	// Pending.
	EventDomainUnverified WebhookEvent = "domain.unverified"
	// EventDomainTLSReady: a Domain's TLSReady condition became True.
	EventDomainTLSReady WebhookEvent = "domain.tls_ready"
)

// WebhookEvents lists every event, in the enum's order.
var WebhookEvents = []WebhookEvent{
	EventLinkCreated, EventLinkUpdated, EventLinkDeleted, EventLinkClicked, EventLinkExpired,
	EventLinkConflict, EventDomainVerified, EventDomainUnverified, EventDomainTLSReady,
}

// WebhookSigningLabel is the label a Secret must carry, with the value
// "true", for a Webhook to sign with it. kurz's cache holds only Secrets
// with it, so a tenant cannot make kurz sign with (and so disclose a MAC
// keyed by) a Secret it did not mark for that.
const WebhookSigningLabel = "kurz.dev/webhook-signing"

// WebhookSpec is a subscription: where kurz sends which events, and how it
// signs them.
type WebhookSpec struct {
	// url is where kurz POSTs the events: an https URL, or an http or https
	// URL of a Service of the Webhook's own namespace
	// (http://<service>.<namespace>.svc[.cluster.local][:port]/...), which
	// the manager accepts only with --webhook-allow-cluster-services.
	// kurz refuses, when it connects, any address that is loopback,
	// link-local (the cloud metadata address 169.254.169.254 included),
	// private (RFC 1918, IPv6 ULA), CGNAT, unspecified or multicast; the
	// Webhook is then Stalled (reason URLRefused).
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=2048
	// +kubebuilder:validation:XValidation:rule="isURL(self) && url(self).getScheme() in ['http', 'https'] && size(url(self).getHostname()) > 0",message="must be an absolute https URL with a host"
	// +kubebuilder:validation:XValidation:rule="url(self).getScheme() == 'https' || self.matches('^http://[a-z0-9]([-a-z0-9]*[a-z0-9])?[.][a-z0-9]([-a-z0-9]*[a-z0-9])?[.]svc([.]cluster[.]local)?([:/?]|$)')",message="must be https; http only for a Service of this namespace (<service>.<namespace>.svc)"
	// +kubebuilder:validation:XValidation:rule="!self.matches('^[^/?#]*//[^/?#]*@')",message="must not contain user-info (user:password@)"
	// +kubebuilder:validation:XValidation:rule="!self.matches('[\\\\s\\\\p{Z}\\\\p{C}]')",message="must not contain spaces or control characters (percent-encode them)"
	// +kubebuilder:validation:XValidation:rule="!self.contains('#')",message="must not contain a fragment (#)"
	URL string `json:"url"`

	// secretRef names the Secret, in the Webhook's namespace, whose value
	// signs the deliveries. The Secret must carry the label
	// kurz.dev/webhook-signing: "true"; its value is a Standard Webhooks
	// secret: "whsec_" followed by the base64 of 24 to 64 random bytes
	// (several, separated by spaces, while rotating: kurz signs with each).
	// kurz never shows the value.
	// +required
	SecretRef WebhookSecretRef `json:"secretRef"`

	// events are the events sent; at least one.
	// +required
	// +listType=set
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=9
	Events []WebhookEvent `json:"events"`

	// linkSelector limits link.* events to the Links it selects: by labels
	// (matchLabels, matchExpressions) and by tags (a Link with any of
	// them); both given, a Link must match both. Unset or empty, every Link
	// of the namespace. domain.* events are not filtered by it.
	// +optional
	LinkSelector *WebhookLinkSelector `json:"linkSelector,omitempty"`

	// payloadVersion is the version of the payload's shape. v1 is the only
	// one; later versions will be added beside it, and v1 only ever gains
	// fields.
	// +optional
	// +kubebuilder:default=v1
	// +kubebuilder:validation:Enum=v1
	PayloadVersion string `json:"payloadVersion,omitempty"`

	// timeoutSeconds bounds one delivery attempt: connecting, sending and
	// reading the answer's status and its first 4 KiB.
	// +optional
	// +kubebuilder:default=10
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=30
	TimeoutSeconds int32 `json:"timeoutSeconds,omitempty"`

	// maxAttempts bounds the attempts to deliver one event (the first
	// included), spaced by exponential backoff with full jitter from 1 s,
	// doubling up to 5 minutes. After the last one the event is dropped
	// and counted (kurz_webhook_dropped_total{reason="attempts"}).
	// +optional
	// +kubebuilder:default=8
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=20
	MaxAttempts int32 `json:"maxAttempts,omitempty"`

	// maxClicksPerRequest bounds the clicks of one link.clicked request;
	// a request also holds at most 96 KiB of JSON and waits at most 1 s
	// for its batch to fill, whichever comes first. Most of what a
	// request costs the sending replica is per request, not per click, so
	// a receiver that takes larger batches costs kurz less CPU a click
	// (docs/webhooks.md).
	// +optional
	// +kubebuilder:default=100
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=1000
	MaxClicksPerRequest int32 `json:"maxClicksPerRequest,omitempty"`
}

// WebhookSecretRef names a key of a Secret in the Webhook's namespace.
type WebhookSecretRef struct {
	// name is the Secret's name.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`
	Name string `json:"name"`
	// key is the key of the Secret's data that holds the signing secret.
	// +optional
	// +kubebuilder:default=secret
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[-._a-zA-Z0-9]+$`
	Key string `json:"key,omitempty"`
}

// WebhookLinkSelector selects Links by labels and tags.
type WebhookLinkSelector struct {
	// matchLabels and matchExpressions select Links by their labels, as in
	// a Deployment's selector.
	metav1.LabelSelector `json:",inline"`
	// tags select the Links that have any of them.
	// +optional
	// +listType=set
	// +kubebuilder:validation:MaxItems=32
	// +kubebuilder:validation:items:MinLength=1
	// +kubebuilder:validation:items:MaxLength=64
	Tags []string `json:"tags,omitempty"`
}

// WebhookStatus is what kurz observed about a Webhook and its deliveries.
// The delivery fields are written at most every 30 seconds per Webhook and
// replica, never per delivery: per-delivery figures are metrics
// (docs/webhooks.md).
type WebhookStatus struct {
	// observedGeneration is the metadata.generation the controller last
	// reconciled; 0 until its first pass.
	// +optional
	// +kubebuilder:default=0
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// host is spec.url's host, for `kubectl get webhooks`.
	// +optional
	// +kubebuilder:validation:MaxLength=260
	Host string `json:"host,omitempty"`
	// lastDeliveryTime is when the latest delivery attempt ended, whatever
	// its outcome.
	// +optional
	LastDeliveryTime *metav1.Time `json:"lastDeliveryTime,omitempty"`
	// lastSuccessTime is when the latest attempt answered 2xx.
	// +optional
	LastSuccessTime *metav1.Time `json:"lastSuccessTime,omitempty"`
	// consecutiveFailures counts the attempts that failed since the last
	// success, as the replica that wrote lastDeliveryTime saw them.
	// +optional
	// +kubebuilder:validation:Minimum=0
	ConsecutiveFailures int64 `json:"consecutiveFailures,omitempty"`
	// lastError is why the latest attempt failed, when it did: an HTTP
	// status ("HTTP 503 Service Unavailable") or a network error's class
	// ("timeout", "connection refused", "TLS: ..."), never a secret, a
	// header or a payload. Empty after a success.
	// +optional
	// +kubebuilder:validation:MaxLength=256
	LastError string `json:"lastError,omitempty"`
	// conditions: Ready (True while the Webhook can deliver and its last
	// attempt succeeded), Reconciling (deliveries failing: the receiver is
	// down or slow, and retries go on) and Stalled (the Secret is missing
	// or invalid, the URL is refused, or the receiver answered 410 Gone:
	// only a change of the Webhook, its Secret or the receiver settles
	// it), in the kstatus shape GitOps tools read.
	// +optional
	// +listType=map
	// +listMapKey=type
	// +patchStrategy=merge
	// +patchMergeKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty" patchStrategy:"merge" patchMergeKey:"type"`
}

// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=wh,categories=kurz
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Reason",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].reason`
// +kubebuilder:printcolumn:name="Host",type=string,JSONPath=`.status.host`
// +kubebuilder:printcolumn:name="Events",type=string,JSONPath=`.spec.events`
// +kubebuilder:printcolumn:name="Last Success",type=date,JSONPath=`.status.lastSuccessTime`,priority=1
// +kubebuilder:printcolumn:name="Last Error",type=string,JSONPath=`.status.lastError`,priority=1
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`

// Webhook subscribes a receiver to events of its namespace's Links and
// Domains: kurz POSTs each event, signed with the Standard Webhooks scheme,
// to spec.url.
type Webhook struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec is the subscription.
	// +required
	Spec WebhookSpec `json:"spec"`

	// status is what kurz observed. Defaulted to an empty status, so that
	// observedGeneration (0) reads behind metadata.generation until the
	// controller's first pass.
	// +optional
	// +kubebuilder:default={}
	Status WebhookStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// WebhookList is a list of Webhooks.
type WebhookList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Webhook `json:"items"`
}
