package v1alpha1

// The limits below are enforced twice, with the same numbers: by kube-apiserver
// through the CRD schema (markers on the types) and by the kurz API before it
// writes anything. Keep the markers in link_types.go and domain_types.go in step
// with these constants; the CRD validation tests check both doors agree.
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

	// URLMaxLength bounds every URL field (destination, targets, fallbacks).
	URLMaxLength = 2048
	// URLSchemePattern: absolute http(s) URL whose authority is a host with an
	// optional port and no user-info ('@' is refused before the path).
	URLSchemePattern = `^[hH][tT][tT][pP][sS]?://[^/?#@\s]+([/?#][^\s]*)?$`

	// UTMMaxLength bounds each utm_* value.
	UTMMaxLength = 255

	// TagMaxLength bounds one tag; MaxTags bounds how many a Link has.
	TagMaxLength = 64
	MaxTags      = 32
)
