package restapi

import (
	"encoding/json"
	"strconv"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	kurzv1alpha1 "github.com/kurz-dev/kurz/api/v1alpha1"
	"github.com/kurz-dev/kurz/internal/validation"
)

// linkInput is a validated create or update body. key, domain and url are
// required; every other field is optional (linkOptions).
type linkInput struct {
	key, domain, url string
	linkOptions
}

// linkOptions are a link's optional fields: absent keeps the current
// value, null (or "") clears it, a value sets it.
type linkOptions struct {
	ios, android       optional[string]
	utm                [6]optional[string] // in utmFields order
	externalID         optional[int64]
	password           optional[string] // plaintext; hashed before any write
	expiresAt          optional[time.Time]
	expiredRedirectURL optional[string]
	tags               optional[[]string]
}

// utmFields are the API names of the utm values, in LinkUTM field order.
var utmFields = [6]string{"utm_source", "utm_medium", "utm_campaign", "utm_term", "utm_content", "utm_name"}

// decodeLinkInput reads and validates every field of a link body; the
// error is a 422 naming all the fields at fault. Checks that need the
// cluster (the domain is the workspace's, the key is free) come later.
func decodeLinkInput(raw map[string]json.RawMessage) (linkInput, error) {
	f := &form{raw: raw}
	var in linkInput
	var ok bool
	if in.key, ok = f.required("key"); ok {
		f.check("key", &in.key, validation.Key)
	}
	if in.domain, ok = f.required("domain"); ok {
		in.domain = validation.NormalizeHostname(in.domain)
		f.check("domain", &in.domain, validation.Hostname)
	}
	if in.url, ok = f.required("url"); ok {
		f.check("url", &in.url, validation.URL)
	}
	in.linkOptions = decodeLinkOptions(f)
	return in, f.errs.err()
}

// decodeLinkOptions reads and validates the optional fields of a link
// body; errors go to f.
func decodeLinkOptions(f *form) linkOptions {
	var in linkOptions
	in.ios = f.str("ios", true)
	f.check("ios", in.ios.value, validation.URL)
	in.android = f.str("android", true)
	f.check("android", in.android.value, validation.URL)
	for i, name := range utmFields {
		in.utm[i] = f.str(name, true)
		f.check(name, in.utm[i].value, validation.UTM)
	}
	in.externalID = f.integer("external_id")
	if v := in.externalID.value; v != nil {
		if msg := validation.ExternalID(*v); msg != "" {
			f.fail("external_id", msg)
		}
	}
	in.password = f.str("password", false) // a password keeps its spaces
	f.check("password", in.password.value, validation.Password)
	in.expiresAt = f.date("expires_at")
	in.expiredRedirectURL = f.str("expired_redirect_url", true)
	f.check("expired_redirect_url", in.expiredRedirectURL.value, validation.URL)
	in.tags = f.stringList("tags")
	if tags := in.tags.value; tags != nil {
		// Errors name the element as the client sent it, so check before
		// the repeats are dropped.
		for i, t := range *tags {
			if msg := validation.Tag(t); msg != "" {
				f.fail("tags."+strconv.Itoa(i), msg)
			}
		}
		*tags = dedupe(*tags)
		if msg := validation.Tags(*tags); msg != "" {
			f.fail("tags", msg)
		}
	}
	return in
}

// dedupe drops repeated tags, keeping the first of each: tags are a set.
func dedupe(tags []string) []string {
	seen := make(map[string]struct{}, len(tags))
	out := tags[:0]
	for _, t := range tags {
		if _, dup := seen[t]; !dup {
			seen[t] = struct{}{}
			out = append(out, t)
		}
	}
	return out
}

// apply writes the input onto spec. passwordHash is the bcrypt hash of
// in.password (when one was given).
func (in linkInput) apply(spec *kurzv1alpha1.LinkSpec, passwordHash *string) {
	spec.Key = in.key
	spec.Domain = kurzv1alpha1.Hostname(in.domain)
	spec.URL = kurzv1alpha1.URL(in.url)
	in.linkOptions.apply(spec, passwordHash)
}

// apply writes the optional fields that are present onto spec.
func (in linkOptions) apply(spec *kurzv1alpha1.LinkSpec, passwordHash *string) {
	applyURL(in.ios, &spec.IOS)
	applyURL(in.android, &spec.Android)
	applyURL(in.expiredRedirectURL, &spec.ExpiredRedirectURL)

	utm := kurzv1alpha1.LinkUTM{}
	if spec.UTM != nil {
		utm = *spec.UTM
	}
	dst := [6]**string{&utm.Source, &utm.Medium, &utm.Campaign, &utm.Term, &utm.Content, &utm.Name}
	for i := range dst {
		in.utm[i].apply(dst[i])
	}
	spec.UTM = &utm
	if utm == (kurzv1alpha1.LinkUTM{}) {
		spec.UTM = nil
	}

	in.externalID.apply(&spec.ExternalID)
	if in.password.present {
		spec.PasswordHash = passwordHash
	}
	if in.expiresAt.present {
		spec.ExpiresAt = nil
		if t := in.expiresAt.value; t != nil {
			mt := metav1.NewTime(*t)
			spec.ExpiresAt = &mt
		}
	}
	if in.tags.present {
		spec.Tags = nil
		if t := in.tags.value; t != nil && len(*t) > 0 {
			spec.Tags = *t
		}
	}
}

func applyURL(o optional[string], dst **kurzv1alpha1.URL) {
	if !o.present {
		return
	}
	*dst = nil
	if o.value != nil {
		u := kurzv1alpha1.URL(*o.value)
		*dst = &u
	}
}
