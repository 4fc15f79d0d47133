package routing

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
)

// maxNameLength is the longest DNS-1123 subdomain, and so the longest name
// of an Ingress or a Secret.
const maxNameLength = 253

// hashLength is how many hex digits of a SHA-256 a shortened name keeps:
// 40 bits, so two hostnames sharing a 242-character prefix still get
// different names.
const hashLength = 10

// SecretName is the Secret holding host's certificate: "kurz-tls-" and the
// hostname, which is already a valid DNS-1123 subdomain (lowercase,
// punycode). A name too long keeps a prefix and appends a hash of the whole
// hostname, so different hostnames never share a Secret.
func SecretName(host string) string {
	return boundedName("kurz-tls-", host)
}

// IngressName is the Ingress of the Domain namespace/name. A namespace name
// holds no dot, so "namespace.name" is unique to the Domain; too long, it is
// shortened like SecretName.
func IngressName(namespace, name string) string {
	return boundedName("kurz-", namespace+"."+name)
}

// boundedName is prefix+s when that fits in maxNameLength, else prefix, as
// much of s as fits (without a trailing '.' or '-', which would make an
// invalid name) and "-" plus a hash of s.
func boundedName(prefix, s string) string {
	if len(prefix)+len(s) <= maxNameLength {
		return prefix + s
	}
	sum := sha256.Sum256([]byte(s))
	keep := s[:maxNameLength-len(prefix)-1-hashLength]
	keep = strings.TrimRight(keep, ".-")
	return prefix + keep + "-" + hex.EncodeToString(sum[:])[:hashLength]
}
