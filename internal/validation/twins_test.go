package validation

import (
	"fmt"
	"io/fs"
	"regexp"
	"sort"
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"

	kurzv1alpha1 "github.com/kurz-dev/kurz/api/v1alpha1"
	"github.com/kurz-dev/kurz/config"
)

// twin is the Go side of a spec field's markers: the constants the API's
// validators are built from, by name (for the failure message) and value.
type twin struct {
	maxLength, itemMaxLength, maxItems named
	// patterns are the regular expressions of the field's CEL rules and
	// OpenAPI pattern, by constant name.
	patterns map[string]string
}

type named struct {
	name  string
	value int64
}

func urlTwin() twin {
	return twin{
		maxLength: named{"URLMaxLength", kurzv1alpha1.URLMaxLength},
		patterns: map[string]string{
			"URLUserInfoPattern":       kurzv1alpha1.URLUserInfoPattern,
			"URLSpaceOrControlPattern": kurzv1alpha1.URLSpaceOrControlPattern,
		},
	}
}

func hostnameTwin() twin {
	return twin{
		maxLength: named{"HostnameMaxLength", kurzv1alpha1.HostnameMaxLength},
		patterns: map[string]string{
			"HostnamePattern":   kurzv1alpha1.HostnamePattern,
			"NumericTLDPattern": kurzv1alpha1.NumericTLDPattern,
		},
	}
}

func utmTwin() twin { return twin{maxLength: named{"UTMMaxLength", kurzv1alpha1.UTMMaxLength}} }

// twins maps every spec field with a length, count or pattern marker (as
// "Kind spec.path") to its Go twin.
var twins = map[string]twin{
	"Link spec.domain": hostnameTwin(),
	"Link spec.key": {
		maxLength: named{"KeyMaxLength", kurzv1alpha1.KeyMaxLength},
		patterns:  map[string]string{"KeyPattern": kurzv1alpha1.KeyPattern},
	},
	"Link spec.url":                urlTwin(),
	"Link spec.ios":                urlTwin(),
	"Link spec.android":            urlTwin(),
	"Link spec.expiredRedirectURL": urlTwin(),
	"Link spec.passwordHash": {
		maxLength: named{"PasswordHashMaxLength", kurzv1alpha1.PasswordHashMaxLength},
		patterns:  map[string]string{"PasswordHashPattern": kurzv1alpha1.PasswordHashPattern},
	},
	"Link spec.tags": {
		maxItems:      named{"MaxTags", kurzv1alpha1.MaxTags},
		itemMaxLength: named{"TagMaxLength", kurzv1alpha1.TagMaxLength},
	},
	"Link spec.utm.source":    utmTwin(),
	"Link spec.utm.medium":    utmTwin(),
	"Link spec.utm.campaign":  utmTwin(),
	"Link spec.utm.term":      utmTwin(),
	"Link spec.utm.content":   utmTwin(),
	"Link spec.utm.name":      utmTwin(),
	"Domain spec.domain":      hostnameTwin(),
	"Domain spec.notFoundURL": urlTwin(),
	"Domain spec.expiredURL":  urlTwin(),
	"Webhook spec.url": {
		maxLength: named{"URLMaxLength", kurzv1alpha1.URLMaxLength},
		patterns: map[string]string{
			"WebhookHTTPURLPattern":    kurzv1alpha1.WebhookHTTPURLPattern,
			"URLUserInfoPattern":       kurzv1alpha1.URLUserInfoPattern,
			"URLSpaceOrControlPattern": kurzv1alpha1.URLSpaceOrControlPattern,
		},
	},
	"Webhook spec.events": {maxItems: named{"MaxWebhookEvents", kurzv1alpha1.MaxWebhookEvents}},
	"Webhook spec.secretRef.name": {
		maxLength: named{"SecretNameMaxLength", kurzv1alpha1.SecretNameMaxLength},
		patterns:  map[string]string{"SecretNamePattern": kurzv1alpha1.SecretNamePattern},
	},
	"Webhook spec.secretRef.key": {
		maxLength: named{"SecretKeyMaxLength", kurzv1alpha1.SecretKeyMaxLength},
		patterns:  map[string]string{"SecretKeyPattern": kurzv1alpha1.SecretKeyPattern},
	},
	"Webhook spec.linkSelector.tags": {
		maxItems:      named{"MaxTags", kurzv1alpha1.MaxTags},
		itemMaxLength: named{"TagMaxLength", kurzv1alpha1.TagMaxLength},
	},
}

// markers is what the generated CRD says of one spec field.
type markers struct {
	maxLength, itemMaxLength, maxItems *int64
	patterns                           []string
}

// celMatches finds the argument of every matches('...') in a CEL rule.
var celMatches = regexp.MustCompile(`matches\('((?:[^'\\]|\\.)*)'\)`)

// specMarkers walks the spec schema of every generated CRD.
func specMarkers(t *testing.T) map[string]markers {
	t.Helper()
	g := NewWithT(t)
	files, err := fs.Glob(config.CRDs, "crd/bases/*.yaml")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(files).NotTo(BeEmpty())
	out := map[string]markers{}
	for _, f := range files {
		b, err := fs.ReadFile(config.CRDs, f)
		g.Expect(err).NotTo(HaveOccurred())
		var crd apiextensionsv1.CustomResourceDefinition
		g.Expect(yaml.Unmarshal(b, &crd)).To(Succeed())
		for _, v := range crd.Spec.Versions {
			spec := v.Schema.OpenAPIV3Schema.Properties["spec"]
			walk(crd.Spec.Names.Kind+" spec", spec, out)
		}
	}
	return out
}

func walk(path string, s apiextensionsv1.JSONSchemaProps, out map[string]markers) {
	var m markers
	m.maxLength, m.maxItems = s.MaxLength, s.MaxItems
	if s.Items != nil && s.Items.Schema != nil {
		m.itemMaxLength = s.Items.Schema.MaxLength
	}
	if s.Pattern != "" {
		m.patterns = append(m.patterns, s.Pattern)
	}
	for _, rule := range s.XValidations {
		for _, match := range celMatches.FindAllStringSubmatch(rule.Rule, -1) {
			// A CEL string literal escapes backslashes.
			m.patterns = append(m.patterns, strings.ReplaceAll(match[1], `\\`, `\`))
		}
	}
	if m.maxLength != nil || m.maxItems != nil || m.itemMaxLength != nil || len(m.patterns) > 0 {
		out[path] = m
	}
	for name, p := range s.Properties {
		walk(path+"."+name, p, out)
	}
}

// TestMarkersMatchGoTwins: every length, count and pattern marker of a spec
// field equals the constant the API's validators use, and every constant
// is some marker's twin. A marker written without a Go twin fails too.
func TestMarkersMatchGoTwins(t *testing.T) {
	found := specMarkers(t)
	for path := range found {
		t.Run(path, func(t *testing.T) {
			g := NewWithT(t)
			tw, ok := twins[path]
			g.Expect(ok).To(BeTrue(), "%s has validation markers but no Go twin in this table (and in api/v1alpha1/validation_rules.go)", path)
			m := found[path]
			checkNumber(g, path, "MaxLength", m.maxLength, tw.maxLength)
			checkNumber(g, path, "MaxItems", m.maxItems, tw.maxItems)
			checkNumber(g, path, "items:MaxLength", m.itemMaxLength, tw.itemMaxLength)
			var want []string
			for name, p := range tw.patterns {
				want = append(want, fmt.Sprintf("%s = %s", name, p))
				g.Expect(m.patterns).To(ContainElement(p), "marker pattern of %s must equal kurzv1alpha1.%s", path, name)
			}
			sort.Strings(want)
			g.Expect(m.patterns).To(HaveLen(len(tw.patterns)), "%s marker patterns %q; Go twins: %q", path, m.patterns, want)
		})
	}
	for path := range twins {
		NewWithT(t).Expect(found).To(HaveKey(path), "the Go twin of %s has no marker in the generated CRD", path)
	}
}

func checkNumber(g Gomega, path, marker string, got *int64, want named) {
	if want.name == "" {
		g.Expect(got).To(BeNil(), "%s has +kubebuilder:validation:%s but no Go twin", path, marker)
		return
	}
	g.Expect(got).NotTo(BeNil(), "%s lacks +kubebuilder:validation:%s (kurzv1alpha1.%s)", path, marker, want.name)
	g.Expect(*got).To(Equal(want.value), "%s +kubebuilder:validation:%s must equal kurzv1alpha1.%s", path, marker, want.name)
}
