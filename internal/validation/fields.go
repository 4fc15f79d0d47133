package validation

import (
	"fmt"
	"net/url"
	"regexp"
	"strings"
	"unicode/utf8"

	kurzv1alpha1 "github.com/kurz-dev/kurz/api/v1alpha1"
)

// The regular expressions of the CRD's CEL rules, compiled from the same
// constants (see api/v1alpha1/validation_rules.go).
var (
	keyPattern      = regexp.MustCompile(kurzv1alpha1.KeyPattern)
	hostnamePattern = regexp.MustCompile(kurzv1alpha1.HostnamePattern)
	numericTLD      = regexp.MustCompile(kurzv1alpha1.NumericTLDPattern)
	userInfoPattern = regexp.MustCompile(kurzv1alpha1.URLUserInfoPattern)
	// spaceOrControl: such characters would reach a Location header raw.
	spaceOrControl = regexp.MustCompile(kurzv1alpha1.URLSpaceOrControlPattern)
	bcryptPattern  = regexp.MustCompile(kurzv1alpha1.PasswordHashPattern)
)

// Messages shared by several validators.
const (
	msgEmpty = "must not be empty"
)

func tooLong(max int) string {
	return fmt.Sprintf("must not be greater than %d characters", max)
}

// length returns the message for a string outside 1..max characters.
func length(s string, max int) string {
	switch n := utf8.RuneCountInString(s); {
	case n == 0:
		return msgEmpty
	case n > max:
		return tooLong(max)
	}
	return ""
}

// URL checks a destination or redirect target (url, ios, android,
// expired_redirect_url, not_found_url, expired_url): an absolute http or
// https URL with a host and no user-info, at most URLMaxLength characters.
// It mirrors the CEL rules of the URL type: isURL(self) (Go's
// url.ParseRequestURI), url(self).getScheme() in ['http','https'],
// url(self).getHostname() not empty, and no '@' in the authority.
func URL(s string) string {
	if msg := length(s, kurzv1alpha1.URLMaxLength); msg != "" {
		return msg
	}
	if spaceOrControl.MatchString(s) {
		return "must not contain spaces or control characters (percent-encode them)"
	}
	if _, err := url.ParseRequestURI(s); err != nil {
		return "must be an absolute http or https URL with a host"
	}
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Hostname() == "" {
		return "must be an absolute http or https URL with a host"
	}
	if userInfoPattern.MatchString(s) {
		return "must not contain user-info (user:password@)"
	}
	return ""
}

// Key checks a link key: 1 to KeyMaxLength letters, digits, '-' and '_'.
func Key(s string) string {
	return lengthAndPatterns(s, kurzv1alpha1.KeyMaxLength,
		pattern{keyPattern, true, "may contain only letters, digits, dashes and underscores"})
}

// Hostname checks a hostname as stored: lowercase DNS labels (punycode for
// international names), at most HostnameMaxLength characters. Callers that
// accept user input normalize it first (see NormalizeHostname).
func Hostname(s string) string {
	return lengthAndPatterns(s, kurzv1alpha1.HostnameMaxLength,
		pattern{hostnamePattern, true, "must be a valid domain name"},
		pattern{numericTLD, false, "must be a domain name, not an IP address"})
}

// pattern is one CEL matches() rule of a field: the value must match re
// (or, when match is false, must not), else msg.
type pattern struct {
	re    *regexp.Regexp
	match bool
	msg   string
}

// lengthAndPatterns checks s against 1..max characters, then against each
// pattern in order, and returns the first message.
func lengthAndPatterns(s string, max int, patterns ...pattern) string {
	if msg := length(s, max); msg != "" {
		return msg
	}
	for _, p := range patterns {
		if p.re.MatchString(s) != p.match {
			return p.msg
		}
	}
	return ""
}

// UTM checks one utm_* value: at most UTMMaxLength characters. An empty
// value is allowed by the CRD (it simply adds an empty parameter).
func UTM(s string) string {
	if utf8.RuneCountInString(s) > kurzv1alpha1.UTMMaxLength {
		return tooLong(kurzv1alpha1.UTMMaxLength)
	}
	return ""
}

// Tag checks one tag: 1 to TagMaxLength characters.
func Tag(s string) string {
	return length(s, kurzv1alpha1.TagMaxLength)
}

// Tags checks a tag list as a whole: at most MaxTags distinct tags. The
// tags themselves are checked with Tag.
func Tags(tags []string) string {
	if len(tags) > kurzv1alpha1.MaxTags {
		return fmt.Sprintf("must not have more than %d items", kurzv1alpha1.MaxTags)
	}
	seen := make(map[string]struct{}, len(tags))
	for _, t := range tags {
		if _, dup := seen[t]; dup {
			return "must not contain duplicates"
		}
		seen[t] = struct{}{}
	}
	return ""
}

// ExternalID checks external_id: a non-negative integer.
func ExternalID(n int64) string {
	if n < 0 {
		return "must be at least 0"
	}
	return ""
}

// PasswordMaxBytes is the longest password bcrypt can hash: it reads 72
// bytes at most, so a longer one would silently be truncated.
const PasswordMaxBytes = 72

// Password checks a plaintext password before it is hashed: not empty and
// at most PasswordMaxBytes bytes.
func Password(s string) string {
	switch {
	case s == "":
		return msgEmpty
	case len(s) > PasswordMaxBytes:
		return fmt.Sprintf("must not be greater than %d bytes", PasswordMaxBytes)
	}
	return ""
}

// PasswordHash checks spec.passwordHash: a bcrypt hash, never plaintext.
func PasswordHash(s string) string {
	if utf8.RuneCountInString(s) > kurzv1alpha1.PasswordHashMaxLength || !bcryptPattern.MatchString(s) {
		return "must be a bcrypt hash with cost 04 to 12, not a plaintext password"
	}
	return ""
}

// NormalizeHostname turns what a person types into the stored form: trimmed,
// without a trailing dot, lowercase, international names in punycode. It
// returns the input trimmed and lowercased when it cannot be converted, so
// Hostname then reports it.
func NormalizeHostname(s string) string {
	s = strings.TrimSuffix(strings.TrimSpace(s), ".")
	if s == "" {
		return s
	}
	if ascii, err := idnaProfile.ToASCII(s); err == nil {
		return ascii
	}
	return strings.ToLower(s)
}
