package manifest

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"runtime"

	"golang.org/x/crypto/bcrypt"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	kurzv1alpha1 "github.com/kurz-dev/kurz/api/v1alpha1"
	"github.com/kurz-dev/kurz/internal/importer"
	"github.com/kurz-dev/kurz/internal/parallel"
)

// Manifest is a Link as a person would write it: no status, no server
// fields.
type Manifest struct {
	APIVersion string                `json:"apiVersion"`
	Kind       string                `json:"kind"`
	Metadata   Metadata              `json:"metadata"`
	Spec       kurzv1alpha1.LinkSpec `json:"spec"`
}

// Metadata is the part of ObjectMeta a manifest sets.
type Metadata struct {
	Name      string `json:"name"`
	Namespace string `json:"namespace,omitempty"`
}

// Name is the object name of the Link for domain/key: the API's readable
// prefix and a hash of the address, the same on every run.
func Name(domain, key string) string {
	sum := sha256.Sum256([]byte(domain + "/" + key))
	return kurzv1alpha1.LinkNamePrefix(key) + hex.EncodeToString(sum[:])[:10]
}

// Build makes the manifests of links, in order. prior holds the password
// hashes already written, by name: one that still verifies against the
// link's password is kept (bcrypt salts each hash anew).
func Build(ctx context.Context, links []importer.Link, namespace string, prior map[string]string) ([]Manifest, error) {
	out := make([]Manifest, len(links))
	names := make(map[string]string, len(links))
	for i, l := range links {
		name := Name(l.Domain, l.Key)
		if other, dup := names[name]; dup {
			return nil, fmt.Errorf("%s and %s would both be named %s", other, l.Domain+"/"+l.Key, name)
		}
		names[name] = l.Domain + "/" + l.Key
		out[i] = Manifest{
			APIVersion: kurzv1alpha1.GroupVersion.String(),
			Kind:       "Link",
			Metadata:   Metadata{Name: name, Namespace: namespace},
			Spec:       spec(l),
		}
	}
	// bcrypt costs tens of milliseconds a password: spread it over the CPUs.
	err := parallel.Each(ctx, 0, len(links), runtime.GOMAXPROCS(0), func(i int) error {
		pw := links[i].Password
		if pw == "" {
			return nil
		}
		hash := prior[out[i].Metadata.Name]
		if hash == "" || bcrypt.CompareHashAndPassword([]byte(hash), []byte(pw)) != nil {
			// The API's cost (bcrypt.DefaultCost, 10): the redirect server
			// checks every password form against it.
			b, err := bcrypt.GenerateFromPassword([]byte(pw), bcrypt.DefaultCost)
			if err != nil {
				return fmt.Errorf("%s: hash the password: %w", links[i].At, err)
			}
			hash = string(b)
		}
		out[i].Spec.PasswordHash = &hash
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// spec is the LinkSpec of an imported link, the password aside.
func spec(l importer.Link) kurzv1alpha1.LinkSpec {
	s := kurzv1alpha1.LinkSpec{
		Domain:             kurzv1alpha1.Hostname(l.Domain),
		Key:                l.Key,
		URL:                kurzv1alpha1.URL(l.URL),
		IOS:                optionalURL(l.IOS),
		Android:            optionalURL(l.Android),
		ExpiredRedirectURL: optionalURL(l.ExpiredRedirectURL),
		ExternalID:         l.ExternalID,
		Tags:               l.Tags,
	}
	if l.ExpiresAt != nil {
		t := metav1.NewTime(*l.ExpiresAt)
		s.ExpiresAt = &t
	}
	utm := kurzv1alpha1.LinkUTM{
		Source: optional(l.UTMSource), Medium: optional(l.UTMMedium), Campaign: optional(l.UTMCampaign),
		Term: optional(l.UTMTerm), Content: optional(l.UTMContent), Name: optional(l.UTMName),
	}
	if utm != (kurzv1alpha1.LinkUTM{}) {
		s.UTM = &utm
	}
	return s
}

func optional(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func optionalURL(s string) *kurzv1alpha1.URL {
	if s == "" {
		return nil
	}
	u := kurzv1alpha1.URL(s)
	return &u
}
