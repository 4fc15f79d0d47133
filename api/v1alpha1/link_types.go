package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// LinkCreatedAtAnnotation is the annotation in which the API server puts its
// microsecond creation time into a Link it creates (timestamps.Format, UTC).
// The Link controller's first status write carries it into status.createdAt
// and status.updatedAt, so a Link created through the API costs two writes
// (the create and that status write), not a third one of the API's own.
// kurz reads it only within a minute of metadata.creationTimestamp: a
// manifest copied from another Link does not date the new one.
const LinkCreatedAtAnnotation = "kurz.dev/created-at"

// LinkSpec is what a short link points to and how it behaves.
type LinkSpec struct {
	// domain is the hostname the link is served on. It must be the spec.domain
	// of a Domain in the same namespace, or the link does not serve
	// (Ready=False, reason DomainNotFound).
	// +required
	Domain Hostname `json:"domain"`

	// key is the path of the short link on its domain: 1-64 letters, digits,
	// '-' and '_'. The pair (domain, key) is unique; when two Links claim it,
	// the oldest serves and the other reports KeyConflict.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=64
	// +kubebuilder:validation:XValidation:rule="self.matches('^[A-Za-z0-9_-]+$')",message="may contain only letters, digits, '-' and '_'"
	Key string `json:"key"`

	// url is the destination visitors are redirected to.
	// +required
	URL URL `json:"url"`

	// ios is the destination for iPhone and iPad visitors, when set.
	// +optional
	IOS *URL `json:"ios,omitempty"`

	// android is the destination for Android visitors, when set.
	// +optional
	Android *URL `json:"android,omitempty"`

	// utm holds campaign parameters added to the destination's query string
	// (each only when the destination does not carry it already).
	// +optional
	UTM *LinkUTM `json:"utm,omitempty"`

	// externalID identifies the link in another system.
	// +optional
	// +kubebuilder:validation:Minimum=0
	ExternalID *int64 `json:"externalID,omitempty"`

	// passwordHash is the bcrypt hash of the password visitors must enter;
	// never the password itself. The API hashes what it is given; kubectl
	// users put the output of `htpasswd -nbBC 10 "" PASSWORD | cut -d: -f2`.
	// +optional
	// +kubebuilder:validation:MaxLength=72
	// The cost is limited to 04..12: a higher one would make every password
	// check of the redirect server cost seconds to days of CPU.
	// +kubebuilder:validation:XValidation:rule="self.matches('^[$]2[aby]?[$](0[4-9]|1[0-2])[$][./A-Za-z0-9]{53}$')",message="must be a bcrypt hash with cost 04 to 12, not a plaintext password"
	PasswordHash *string `json:"passwordHash,omitempty"`

	// expiresAt is when the link stops redirecting to its destination. After
	// it, visitors go to expiredRedirectURL, else the domain's expiredURL,
	// else get 410 Gone.
	// +optional
	// +kubebuilder:validation:Format=date-time
	ExpiresAt *metav1.Time `json:"expiresAt,omitempty"`

	// expiredRedirectURL is where visitors go once the link has expired.
	// +optional
	ExpiredRedirectURL *URL `json:"expiredRedirectURL,omitempty"`

	// tags label the link for people and tools; a set of distinct strings.
	// +optional
	// +listType=set
	// +kubebuilder:validation:MaxItems=32
	// +kubebuilder:validation:items:MinLength=1
	// +kubebuilder:validation:items:MaxLength=64
	Tags []string `json:"tags,omitempty"`
}

// LinkUTM holds the utm_* parameters of a link's destination.
type LinkUTM struct {
	// source is utm_source.
	// +optional
	// +kubebuilder:validation:MaxLength=255
	Source *string `json:"source,omitempty"`
	// medium is utm_medium.
	// +optional
	// +kubebuilder:validation:MaxLength=255
	Medium *string `json:"medium,omitempty"`
	// campaign is utm_campaign.
	// +optional
	// +kubebuilder:validation:MaxLength=255
	Campaign *string `json:"campaign,omitempty"`
	// term is utm_term.
	// +optional
	// +kubebuilder:validation:MaxLength=255
	Term *string `json:"term,omitempty"`
	// content is utm_content.
	// +optional
	// +kubebuilder:validation:MaxLength=255
	Content *string `json:"content,omitempty"`
	// name is utm_name.
	// +optional
	// +kubebuilder:validation:MaxLength=255
	Name *string `json:"name,omitempty"`
}

// LinkStatus is what kurz observed about a Link.
type LinkStatus struct {
	// shortURL is https://<domain>/<key>.
	// +optional
	ShortURL string `json:"shortURL,omitempty"`

	// clicks counts the redirects served (HEAD requests and password forms
	// excluded). Written by the redirect servers, never reset by kurz.
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:default=0
	Clicks int64 `json:"clicks,omitempty"`

	// lastClickTime is when the last counted click happened.
	// +optional
	LastClickTime *metav1.Time `json:"lastClickTime,omitempty"`

	// createdAt is when the link was created, with microseconds. For a
	// Link created through the API it is the time in its
	// kurz.dev/created-at annotation (LinkCreatedAtAnnotation), which the
	// controller's first status write carries over.
	// +optional
	CreatedAt *metav1.MicroTime `json:"createdAt,omitempty"`

	// updatedAt is when the spec last changed (through the API or kubectl),
	// with microseconds.
	// +optional
	UpdatedAt *metav1.MicroTime `json:"updatedAt,omitempty"`

	// updatedGeneration is the metadata.generation that updatedAt was stamped
	// for. Whoever sees a newer generation first (the API server answering the
	// write, or the controller for kubectl edits) stamps it, exactly once.
	// +optional
	UpdatedGeneration int64 `json:"updatedGeneration,omitempty"`

	// observedGeneration is the metadata.generation the controller last
	// reconciled without error; 0 until its first pass (the default, so
	// kstatus and Flux read a new object as in progress, not as current).
	// +optional
	// +kubebuilder:default=0
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// clickWriters is the redirect servers' bookkeeping, not for people (kurz's
	// API never shows it): the latest click write of each redirect server
	// process that wrote clicks here lately. A process that sent a click write
	// and never got the answer reads it to tell whether the write was applied,
	// so clicks are counted exactly once (see internal/redirect). Each writer
	// keeps one entry; entries older than a day, and the oldest past 16, are
	// pruned by whoever writes next.
	// +optional
	// +listType=map
	// +listMapKey=id
	// +kubebuilder:validation:MaxItems=32
	ClickWriters []ClickWriter `json:"clickWriters,omitempty"`

	// clickWritersPrunedThrough is the newest time of a clickWriters entry
	// pruned so far. A writer whose unanswered write is not newer cannot tell
	// from clickWriters whether it was applied (and says so in its log).
	// +optional
	ClickWritersPrunedThrough *metav1.Time `json:"clickWritersPrunedThrough,omitempty"`

	// conditions describe the link's state: Ready (True while it serves its
	// destination or, once expired, its expiry behaviour), Reconciling
	// (waiting for its Domain) and Stalled (a key conflict, or its hostname
	// held by another Domain), in the kstatus shape GitOps tools read.
	// +optional
	// +listType=map
	// +listMapKey=type
	// +patchStrategy=merge
	// +patchMergeKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty" patchStrategy:"merge" patchMergeKey:"type"`
}

// ClickWriter is the latest click write of one redirect server process to a
// Link: the marker that tells the process, after a write whose answer it never
// got, whether that write was applied.
type ClickWriter struct {
	// id names the process: its pod name and a random suffix.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=128
	ID string `json:"id"`

	// seq is the process's sequence number of the write.
	// +required
	Seq int64 `json:"seq"`

	// time is when the process sent the write, by its clock.
	// +required
	Time metav1.Time `json:"time"`
}

// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=lnk,categories=kurz
// +kubebuilder:selectablefield:JSONPath=`.spec.domain`
// +kubebuilder:selectablefield:JSONPath=`.spec.key`
// +kubebuilder:printcolumn:name="Domain",type=string,JSONPath=`.spec.domain`
// +kubebuilder:printcolumn:name="Key",type=string,JSONPath=`.spec.key`
// +kubebuilder:printcolumn:name="URL",type=string,JSONPath=`.spec.url`
// +kubebuilder:printcolumn:name="Clicks",type=integer,JSONPath=`.status.clicks`
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Reason",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].reason`
// +kubebuilder:printcolumn:name="Short URL",type=string,JSONPath=`.status.shortURL`,priority=1
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`

// Link is a short link: https://<spec.domain>/<spec.key> redirects to spec.url.
type Link struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec is the desired link.
	// +required
	Spec LinkSpec `json:"spec"`

	// status is what kurz observed. Defaulted to an empty status, so that
	// observedGeneration (0) reads behind metadata.generation until the
	// controller's first pass.
	// +optional
	// +kubebuilder:default={}
	Status LinkStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// LinkList is a list of Links.
type LinkList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Link `json:"items"`
}
