package v1alpha1

import (
	"regexp"
	"strings"
)

// ShortURL is the link's public address, https://<domain>/<key>: what
// status.shortURL holds, the API's "link" field and a QR code's content.
// One definition, so the three can never disagree.
func (l *Link) ShortURL() string {
	return "https://" + string(l.Spec.Domain) + "/" + l.Spec.Key
}

// linkNameUnsafe is what an object name cannot hold of a (lowercased) key.
var linkNameUnsafe = regexp.MustCompile(`[^a-z0-9-]+`)

// LinkNamePrefix is the readable start of a Link's object name: its key
// made a valid name ("Summer_Sale" -> "summer-sale-"), so `kubectl get
// links` is readable. The API passes it as GenerateName (kube-apiserver
// appends a random suffix); `kurz import` appends a hash of domain and key.
// One definition, so both name Links alike.
func LinkNamePrefix(key string) string {
	name := linkNameUnsafe.ReplaceAllString(strings.ToLower(key), "-")
	name = strings.Trim(name, "-")
	if len(name) > 40 {
		name = strings.TrimRight(name[:40], "-")
	}
	if name == "" {
		name = "link"
	}
	return name + "-"
}
