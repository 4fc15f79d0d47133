package v1alpha1

// The rules below are enforced twice, with the same values: by kube-apiserver
// through the CRD schema (markers on the types) and by the kurz API before it
// writes anything (internal/validation compiles its regular expressions from
// these constants). Markers cannot name Go constants, so they repeat the
// values; internal/validation's TestMarkersMatchGoTwins reads the generated
// CRDs and fails, naming both, when a marker and its constant differ or a
// spec marker has no constant here.
const (
	// KeyMaxLength is the longest key a Link may have.
	KeyMaxLength = 64
	// KeyPattern: letters, digits, '-' and '_'. Keys are URL path segments, so
	// nothing that needs escaping and no '/' (which would make a key ambiguous).
	KeyPattern = `^[A-Za-z0-9_-]+$`

	// HostnameMaxLength is the longest hostname DNS allows.
	HostnameMaxLength = 253
	// HostnamePattern: lowercase DNS labels of 1-63 letters, digits and inner
	// hyphens, separated by dots. International names are stored as punycode.
	HostnamePattern = `^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?([.][a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*$`
	// NumericTLDPattern matches what a hostname must not be: one whose
	// top-level label is all digits, so "10.0.0.1" is an address, not a
	// domain.
	NumericTLDPattern = `(^|[.])[0-9]+$`

	// URLMaxLength bounds every URL field (destination, targets, fallbacks).
	URLMaxLength = 2048
	// URLUserInfoPattern matches what a URL must not have: an '@' in the
	// authority, user-info that can disguise the real host.
	URLUserInfoPattern = `^[^/?#]*//[^/?#]*@`
	// URLSpaceOrControlPattern matches what a URL must not contain: spaces
	// and control characters, which would reach a Location header raw.
	URLSpaceOrControlPattern = `[\s\p{Z}\p{C}]`

	// PasswordHashMaxLength bounds spec.passwordHash (a bcrypt hash is 60).
	PasswordHashMaxLength = 72
	// PasswordHashPattern: a bcrypt hash with cost 04..12; a higher cost
	// would make every password check of the redirect server cost seconds
	// to days of CPU.
	PasswordHashPattern = `^[$]2[aby]?[$](0[4-9]|1[0-2])[$][./A-Za-z0-9]{53}$`

	// UTMMaxLength bounds each utm_* value.
	UTMMaxLength = 255

	// TagMaxLength bounds one tag; MaxTags bounds how many a Link has.
	TagMaxLength = 64
	MaxTags      = 32

	// WebhookServicePattern is a Service's name in cluster DNS,
	// <service>.<namespace>.svc[.cluster.local]: the only host a Webhook's
	// http:// URL may have (WebhookHTTPURLPattern), and the hosts
	// --webhook-allow-cluster-services lets through.
	WebhookServicePattern = `^[a-z0-9]([-a-z0-9]*[a-z0-9])?[.][a-z0-9]([-a-z0-9]*[a-z0-9])?[.]svc([.]cluster[.]local)?$`
	// WebhookHTTPURLPattern is a Webhook's http:// URL: to a Service name.
	// (The CRD matches the whole URL: a rule on url(self).getHostname()
	// costs more than kube-apiserver allows.)
	WebhookHTTPURLPattern = `^http://[a-z0-9]([-a-z0-9]*[a-z0-9])?[.][a-z0-9]([-a-z0-9]*[a-z0-9])?[.]svc([.]cluster[.]local)?([:/?]|$)`
	// MaxWebhookEvents is how many events a Webhook can list: all of them.
	MaxWebhookEvents = 9
	// SecretNameMaxLength and SecretNamePattern: a Secret's name (a DNS
	// subdomain).
	SecretNameMaxLength = 253
	SecretNamePattern   = `^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`
	// SecretKeyMaxLength and SecretKeyPattern: a key of a Secret's data.
	SecretKeyMaxLength = 253
	SecretKeyPattern   = `^[-._a-zA-Z0-9]+$`
)
