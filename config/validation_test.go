package config_test

import (
	"context"
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/yaml"

	"github.com/kurz-dev/kurz/api/v1alpha1"
	"github.com/kurz-dev/kurz/internal/testenv"
	"github.com/kurz-dev/kurz/internal/validation"
)

// badObject is a manifest kube-apiserver must refuse, and what the refusal
// must say: the field path, and a fragment of the reason.
type badObject struct {
	name    string
	kind    string // Link, Domain or Webhook
	spec    string // YAML of spec
	field   string
	message string
}

const validLinkSpec = `{domain: go.example.com, key: ok, url: "https://example.com/"}`

var badObjects = []badObject{
	{"javascript URL", "Link", `{domain: go.example.com, key: a, url: "javascript:alert(1)"}`, "spec.url", "absolute http or https URL"},
	{"data URL", "Link", `{domain: go.example.com, key: a, url: "data:text/html,<script>alert(1)</script>"}`, "spec.url", "absolute http or https URL"},
	{"file URL", "Link", `{domain: go.example.com, key: a, url: "file:///etc/passwd"}`, "spec.url", "absolute http or https URL"},
	{"ftp URL", "Link", `{domain: go.example.com, key: a, url: "ftp://example.com/x"}`, "spec.url", "absolute http or https URL"},
	{"relative URL", "Link", `{domain: go.example.com, key: a, url: "/just/a/path"}`, "spec.url", "absolute http or https URL"},
	{"URL with a space", "Link", `{domain: go.example.com, key: a, url: "https://example.com/a b"}`, "spec.url", "spaces or control characters"},
	{"URL with a line separator", "Link", "{domain: go.example.com, key: a, url: \"https://example.com/a\u2028b\"}", "spec.url", "spaces or control characters"},
	{"URL with user-info", "Link", `{domain: go.example.com, key: a, url: "https://user:secret@example.com/"}`, "spec.url", "user-info"},
	{"URL too long", "Link", `{domain: go.example.com, key: a, url: "https://example.com/` + strings.Repeat("a", v1alpha1.URLMaxLength) + `"}`, "spec.url", "Too long"},
	{"key too long", "Link", `{domain: go.example.com, url: "https://example.com/", key: ` + strings.Repeat("k", v1alpha1.KeyMaxLength+1) + `}`, "spec.key", "Too long"},
	{"key with a space", "Link", `{domain: go.example.com, url: "https://example.com/", key: "my key"}`, "spec.key", "only letters, digits"},
	{"key with a slash", "Link", `{domain: go.example.com, url: "https://example.com/", key: "a/b"}`, "spec.key", "only letters, digits"},
	{"empty key", "Link", `{domain: go.example.com, url: "https://example.com/", key: ""}`, "spec.key", "at least 1 chars long"},
	{"missing url", "Link", `{domain: go.example.com, key: a}`, "spec.url", "Required value"},
	{"missing domain", "Link", `{key: a, url: "https://example.com/"}`, "spec.domain", "Required value"},
	{"uppercase hostname", "Link", `{domain: Go.Example.com, key: a, url: "https://example.com/"}`, "spec.domain", "lowercase hostname"},
	{"hostname with underscore", "Domain", `{domain: exa_mple.com}`, "spec.domain", "lowercase hostname"},
	{"hostname with leading hyphen", "Domain", `{domain: -bad.example.com}`, "spec.domain", "lowercase hostname"},
	{"hostname label over 63", "Domain", `{domain: ` + strings.Repeat("a", 64) + `.com}`, "spec.domain", "lowercase hostname"},
	{"hostname with a port", "Domain", `{domain: "example.com:8080"}`, "spec.domain", "lowercase hostname"},
	{"IP address as hostname", "Domain", `{domain: "10.0.0.1"}`, "spec.domain", "not an IP address"},
	{"missing hostname", "Domain", `{notFoundURL: "https://example.com/"}`, "spec.domain", "Required value"},
	{"negative externalID", "Link", `{domain: go.example.com, key: a, url: "https://example.com/", externalID: -1}`, "spec.externalID", "greater than or equal to 0"},
	{"expiresAt not a date", "Link", `{domain: go.example.com, key: a, url: "https://example.com/", expiresAt: "next tuesday"}`, "spec.expiresAt", "date-time"},
	{"duplicate tags", "Link", `{domain: go.example.com, key: a, url: "https://example.com/", tags: [sale, sale]}`, "spec.tags[1]", "Duplicate value"},
	{"tag too long", "Link", `{domain: go.example.com, key: a, url: "https://example.com/", tags: [` + strings.Repeat("t", v1alpha1.TagMaxLength+1) + `]}`, "spec.tags[0]", "Too long"},
	{"empty tag", "Link", `{domain: go.example.com, key: a, url: "https://example.com/", tags: [""]}`, "spec.tags[0]", "at least 1 chars long"},
	{"utm value too long", "Link", `{domain: go.example.com, key: a, url: "https://example.com/", utm: {source: ` + strings.Repeat("u", v1alpha1.UTMMaxLength+1) + `}}`, "spec.utm.source", "Too long"},
	{"plaintext password", "Link", `{domain: go.example.com, key: a, url: "https://example.com/", passwordHash: hunter2}`, "spec.passwordHash", "bcrypt hash"},
	{"bcrypt cost too high", "Link", `{domain: go.example.com, key: a, url: "https://example.com/", passwordHash: "$2a$31$` + strings.Repeat("a", 53) + `"}`, "spec.passwordHash", "cost 04 to 12"},
	{"bcrypt cost 13", "Link", `{domain: go.example.com, key: a, url: "https://example.com/", passwordHash: "$2b$13$` + strings.Repeat("a", 53) + `"}`, "spec.passwordHash", "cost 04 to 12"},
	{"javascript ios target", "Link", `{domain: go.example.com, key: a, url: "https://example.com/", ios: "javascript:alert(1)"}`, "spec.ios", "absolute http or https URL"},
	{"android target with user-info", "Link", `{domain: go.example.com, key: a, url: "https://example.com/", android: "http://a:b@evil.example/"}`, "spec.android", "user-info"},
	{"data expiredRedirectURL", "Link", `{domain: go.example.com, key: a, url: "https://example.com/", expiredRedirectURL: "data:,gone"}`, "spec.expiredRedirectURL", "absolute http or https URL"},
	{"javascript notFoundURL", "Domain", `{domain: example.com, notFoundURL: "javascript:void(0)"}`, "spec.notFoundURL", "absolute http or https URL"},
	{"expiredURL without host", "Domain", `{domain: example.com, expiredURL: "https://"}`, "spec.expiredURL", "absolute http or https URL"},
	{"webhook over http", "Webhook", webhookSpec(`url: "http://hooks.example.com/x"`), "spec.url", "must be https"},
	{"webhook over http to a look-alike", "Webhook", webhookSpec(`url: "http://hooks.svc.example.com/x"`), "spec.url", "must be https"},
	{"webhook javascript URL", "Webhook", webhookSpec(`url: "javascript:alert(1)"`), "spec.url", "absolute https URL"},
	{"webhook URL with user-info", "Webhook", webhookSpec(`url: "https://u:p@hooks.example.com/"`), "spec.url", "user-info"},
	{"webhook URL with a fragment", "Webhook", webhookSpec(`url: "https://hooks.example.com/#x"`), "spec.url", "fragment"},
	{"webhook URL too long", "Webhook", webhookSpec(`url: "https://hooks.example.com/` + strings.Repeat("a", v1alpha1.URLMaxLength) + `"`), "spec.url", "Too long"},
	{"webhook without events", "Webhook", webhookSpec(`events: []`), "spec.events", "at least 1 items"},
	{"webhook unknown event", "Webhook", webhookSpec(`events: [link.visited]`), "spec.events[0]", "Unsupported value"},
	{"webhook secret name", "Webhook", webhookSpec(`secretRef: {name: "Signing_Key"}`), "spec.secretRef.name", "should match"},
	{"webhook secret key", "Webhook", webhookSpec(`secretRef: {name: signing, key: "a/b"}`), "spec.secretRef.key", "should match"},
	{"webhook timeout", "Webhook", webhookSpec(`timeoutSeconds: 31`), "spec.timeoutSeconds", "less than or equal to 30"},
	{"webhook attempts", "Webhook", webhookSpec(`maxAttempts: 0`), "spec.maxAttempts", "greater than or equal to 1"},
	{"webhook clicks per request", "Webhook", webhookSpec(`maxClicksPerRequest: 1001`), "spec.maxClicksPerRequest", "less than or equal to 1000"},
	{"webhook payload version", "Webhook", webhookSpec(`payloadVersion: v2`), "spec.payloadVersion", "Unsupported value"},
	{"webhook empty tag", "Webhook", webhookSpec(`linkSelector: {tags: [""]}`), "spec.linkSelector.tags[0]", "at least 1 chars long"},
}

// webhookSpec is a valid Webhook spec with fields replaced (YAML "key:
// value" pairs, later keys win).
func webhookSpec(fields string) string {
	return `{url: "https://hooks.example.com/x", events: [link.created], secretRef: {name: signing}, ` + fields + `}`
}

func TestKubeAPIServerRejectsBadObjects(t *testing.T) {
	testenv.Need(t)
	ns := newNamespace(t)
	for _, tc := range badObjects {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			obj := manifest(t, tc.kind, "bad", ns, tc.spec)
			err := k8s.Create(context.Background(), obj)
			g.Expect(apierrors.IsInvalid(err)).To(BeTrue(), "want Invalid, got %v", err)
			g.Expect(err.Error()).To(ContainSubstring(tc.field+":"), "the error names the field")
			g.Expect(err.Error()).To(ContainSubstring(tc.message))
		})
	}
}

// TestValidLinkIsAccepted keeps the table honest: the same manifest with a
// good spec must pass, so a rejection above is down to the bad field alone.
func TestValidLinkIsAccepted(t *testing.T) {
	testenv.Need(t)
	ns := newNamespace(t)
	NewWithT(t).Expect(k8s.Create(context.Background(), manifest(t, "Link", "good", ns, validLinkSpec))).To(Succeed())
	NewWithT(t).Expect(k8s.Create(context.Background(), manifest(t, "Domain", "good", ns, `{domain: xn--bcher-kva.example}`))).To(Succeed())
	// http only to a Service name, on any port and path; https anywhere.
	NewWithT(t).Expect(k8s.Create(context.Background(), manifest(t, "Webhook", "service", ns, webhookSpec(`url: "http://receiver.team-a.svc.cluster.local:8080/hook?x=1"`)))).To(Succeed())
	NewWithT(t).Expect(k8s.Create(context.Background(), manifest(t, "Webhook", "https", ns, webhookSpec(`url: "https://203.0.113.9:8443/hook"`)))).To(Succeed())
	// The highest cost allowed: the bcrypt rows above fail on the cost alone.
	NewWithT(t).Expect(k8s.Create(context.Background(), manifest(t, "Link", "cost12", ns,
		`{domain: go.example.com, key: c12, url: "https://example.com/", passwordHash: "$2y$12$`+strings.Repeat("a", 53)+`"}`))).To(Succeed())
}

// TestAPIValidatorsRejectTheSameObjects feeds the table through the Go
// validators the API uses, so that what kubectl cannot create, the API
// cannot create either.
func TestAPIValidatorsRejectTheSameObjects(t *testing.T) {
	for _, tc := range badObjects {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			fields, decodeErr := specErrors(tc.kind, tc.spec)
			if decodeErr != nil {
				// A value of the wrong shape (a date that is not one) fails
				// before validation, as it does in the API's JSON decoding.
				g.Expect(decodeErr.Error()).To(ContainSubstring("parsing time"))
				return
			}
			want, _, _ := strings.Cut(tc.field, "[")
			g.Expect(fields).To(HaveKey(want), "Go validators flag %s", want)
		})
	}
}

// specErrors runs every field validator on a spec, keyed by field path.
func specErrors(kind, specYAML string) (map[string]string, error) {
	errs := map[string]string{}
	check := func(path, msg string) {
		if msg != "" {
			errs[path] = msg
		}
	}
	checkURL := func(path string, u *v1alpha1.URL) {
		if u != nil {
			check(path, validation.URL(string(*u)))
		}
	}
	if kind == "Webhook" {
		var s v1alpha1.WebhookSpec
		if err := yaml.Unmarshal([]byte(specYAML), &s); err != nil {
			return nil, err
		}
		check("spec.url", validation.WebhookURL(s.URL))
		if len(s.Events) == 0 {
			check("spec.events", "is required")
		}
		for _, e := range s.Events {
			check("spec.events", validation.WebhookEvent(string(e)))
		}
		check("spec.secretRef.name", validation.SecretName(s.SecretRef.Name))
		if s.SecretRef.Key != "" {
			check("spec.secretRef.key", validation.SecretKey(s.SecretRef.Key))
		}
		if s.TimeoutSeconds > 30 || s.TimeoutSeconds < 0 {
			check("spec.timeoutSeconds", "out of range")
		}
		if s.MaxAttempts > 20 || (s.MaxAttempts < 1 && strings.Contains(specYAML, "maxAttempts")) {
			check("spec.maxAttempts", "out of range")
		}
		if s.MaxClicksPerRequest > 1000 || (s.MaxClicksPerRequest < 1 && strings.Contains(specYAML, "maxClicksPerRequest")) {
			check("spec.maxClicksPerRequest", "out of range")
		}
		if s.PayloadVersion != "" && s.PayloadVersion != "v1" {
			check("spec.payloadVersion", "must be v1")
		}
		if s.LinkSelector != nil {
			for _, tag := range s.LinkSelector.Tags {
				check("spec.linkSelector.tags", validation.Tag(tag))
			}
		}
		return errs, nil
	}
	if kind == "Domain" {
		var s v1alpha1.DomainSpec
		if err := yaml.Unmarshal([]byte(specYAML), &s); err != nil {
			return nil, err
		}
		check("spec.domain", validation.Hostname(string(s.Domain)))
		checkURL("spec.notFoundURL", s.NotFoundURL)
		checkURL("spec.expiredURL", s.ExpiredURL)
		return errs, nil
	}
	var s v1alpha1.LinkSpec
	if err := yaml.Unmarshal([]byte(specYAML), &s); err != nil {
		return nil, err
	}
	check("spec.domain", validation.Hostname(string(s.Domain)))
	check("spec.key", validation.Key(s.Key))
	check("spec.url", validation.URL(string(s.URL)))
	checkURL("spec.ios", s.IOS)
	checkURL("spec.android", s.Android)
	checkURL("spec.expiredRedirectURL", s.ExpiredRedirectURL)
	if s.ExternalID != nil {
		check("spec.externalID", validation.ExternalID(*s.ExternalID))
	}
	if s.PasswordHash != nil {
		check("spec.passwordHash", validation.PasswordHash(*s.PasswordHash))
	}
	check("spec.tags", validation.Tags(s.Tags))
	for _, tag := range s.Tags {
		check("spec.tags", validation.Tag(tag))
	}
	if s.UTM != nil && s.UTM.Source != nil {
		check("spec.utm.source", validation.UTM(*s.UTM.Source))
	}
	return errs, nil
}
