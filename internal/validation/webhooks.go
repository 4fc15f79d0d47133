package validation

import (
	"net/url"
	"regexp"
	"strings"

	kurzv1alpha1 "github.com/kurz-dev/kurz/api/v1alpha1"
)

// The regular expressions of the Webhook CRD's markers, compiled from the
// same constants.
var (
	httpURLPattern    = regexp.MustCompile(kurzv1alpha1.WebhookHTTPURLPattern)
	secretNamePattern = regexp.MustCompile(kurzv1alpha1.SecretNamePattern)
	secretKeyPattern  = regexp.MustCompile(kurzv1alpha1.SecretKeyPattern)
)

// WebhookURL checks a Webhook's url as its CRD does: an absolute URL
// (URL's rules) that is https, or http to a Service name
// (<service>.<namespace>.svc[.cluster.local]), without a fragment. Where
// it may lead (no loopback, private or metadata address) is decided when
// kurz connects, and reported in the Webhook's status.
func WebhookURL(s string) string {
	if msg := URL(s); msg != "" {
		return msg
	}
	u, _ := url.Parse(s) // URL parsed it
	if u.Scheme != "https" && !httpURLPattern.MatchString(s) {
		return "must be https; http only for a Service of this namespace (<service>.<namespace>.svc)"
	}
	if strings.Contains(s, "#") {
		return "must not contain a fragment (#)"
	}
	return ""
}

// SecretName checks the name of a Secret: a DNS subdomain of at most
// SecretNameMaxLength characters.
func SecretName(s string) string {
	return lengthAndPatterns(s, kurzv1alpha1.SecretNameMaxLength,
		pattern{secretNamePattern, true, "must be a Secret's name: lowercase letters, digits, '-' and '.'"})
}

// SecretKey checks a key of a Secret's data.
func SecretKey(s string) string {
	return lengthAndPatterns(s, kurzv1alpha1.SecretKeyMaxLength,
		pattern{secretKeyPattern, true, "may contain only letters, digits, '-', '_' and '.'"})
}

// WebhookEvent checks an event name.
func WebhookEvent(s string) string {
	for _, e := range kurzv1alpha1.WebhookEvents {
		if string(e) == s {
			return ""
		}
	}
	names := make([]string, len(kurzv1alpha1.WebhookEvents))
	for i, e := range kurzv1alpha1.WebhookEvents {
		names[i] = string(e)
	}
	return "must be one of: " + strings.Join(names, ", ")
}
