package v1alpha1

// URL is an absolute http or https URL with a host and no user-info. The CEL
// rules refuse javascript:, data:, file: and every other scheme, URLs that
// smuggle credentials ("https://user:pass@host/"), and whitespace or control
// characters, which would reach a Location header raw.
//
// +kubebuilder:validation:MinLength=1
// +kubebuilder:validation:MaxLength=2048
// +kubebuilder:validation:XValidation:rule="isURL(self) && url(self).getScheme() in ['http', 'https'] && size(url(self).getHostname()) > 0",message="must be an absolute http or https URL with a host"
// +kubebuilder:validation:XValidation:rule="!self.matches('^[^/?#]*//[^/?#]*@')",message="must not contain user-info (user:password@)"
// +kubebuilder:validation:XValidation:rule="!self.matches('[\\\\s\\\\p{Z}\\\\p{C}]')",message="must not contain spaces or control characters (percent-encode them)"
type URL string

// Hostname is a lowercase DNS name: labels of 1-63 letters, digits and inner
// hyphens separated by dots, 253 characters at most. International names are
// written in punycode (xn--...).
//
// +kubebuilder:validation:MinLength=1
// +kubebuilder:validation:MaxLength=253
// +kubebuilder:validation:XValidation:rule="self.matches('^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?([.][a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*$')",message="must be a lowercase hostname of valid DNS labels (letters, digits and '-', separated by dots)"
// +kubebuilder:validation:XValidation:rule="!self.matches('(^|[.])[0-9]+$')",message="must be a domain name, not an IP address (a top-level label is never all digits)"
type Hostname string
