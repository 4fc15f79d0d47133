package restapi

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	kurzv1alpha1 "github.com/kurz-dev/kurz/api/v1alpha1"
	"github.com/kurz-dev/kurz/internal/validation"
)

// FuzzDecodeLink feeds arbitrary bodies through the link decoder: it must
// never panic, must answer 400 or 422 for what it refuses, and what it
// accepts must satisfy every CRD rule (so kube-apiserver accepts it too).
func FuzzDecodeLink(f *testing.F) {
	for _, s := range []string{
		`{"key":"a","domain":"example.com","url":"https://e.com"}`,
		`{"key":"a","domain":"Bücher.DE","url":"https://e.com","tags":["x","x",""],"external_id":"12"}`,
		`{"key":5,"domain":null,"url":"javascript:x","ios":"","password":"  pw  ","expires_at":"2030-01-01"}`,
		`{"key":"a","domain":"e.com","url":"https://e.com","utm_source":"` + strings.Repeat("u", 256) + `"}`,
		`[1,2]`, `{`, ``, `null`, `{"tags":{"a":1}}`, `{"external_id":1e3}`,
	} {
		f.Add([]byte(s))
	}
	fuzzDecode(f, decodeLinkInput, func(t *testing.T, in linkInput) {
		var spec kurzv1alpha1.LinkSpec
		in.apply(&spec, nil)
		checkLinkSpec(t, &spec)
	})
}

// FuzzDecodeDomain is FuzzDecodeLink for domain bodies.
func FuzzDecodeDomain(f *testing.F) {
	for _, s := range []string{
		`{"domain":"example.com"}`, `{"domain":" EXAMPLE.com. ","not_found_url":"https://e.com/404"}`,
		`{"domain":"xn--bcher-kva.de","expired_url":null}`, `{"domain":"a..b"}`, `{"domain":true}`, `{}`,
	} {
		f.Add([]byte(s))
	}
	fuzzDecode(f, decodeDomainInput, func(t *testing.T, in domainInput) {
		var spec kurzv1alpha1.DomainSpec
		in.apply(&spec)
		if msg := validation.Hostname(string(spec.Domain)); msg != "" {
			t.Fatalf("accepted domain %q: %s", spec.Domain, msg)
		}
		for _, u := range []*kurzv1alpha1.URL{spec.NotFoundURL, spec.ExpiredURL} {
			if u != nil && validation.URL(string(*u)) != "" {
				t.Fatalf("accepted URL %q", *u)
			}
		}
	})
}

// fuzzDecode fuzzes a body decoder: malformed JSON must be a 400, a body
// the decoder refuses a 422, and what it accepts must pass check.
func fuzzDecode[In any](f *testing.F, decode func(map[string]json.RawMessage) (In, error), check func(*testing.T, In)) {
	f.Fuzz(func(t *testing.T, body []byte) {
		raw, err := parseObject(body)
		if err != nil {
			expectStatus(t, err, http.StatusBadRequest)
			return
		}
		in, err := decode(raw)
		if err != nil {
			expectStatus(t, err, http.StatusUnprocessableEntity)
			return
		}
		check(t, in)
	})
}

func expectStatus(t *testing.T, err error, status int) {
	t.Helper()
	ae, ok := err.(*apiError)
	if !ok || ae.status != status {
		t.Fatalf("want a %d, got %v", status, err)
	}
	if status == http.StatusUnprocessableEntity && (ae.fields == nil || ae.fields.empty() || ae.message == "") {
		t.Fatalf("422 without field messages: %v", err)
	}
}

func checkLinkSpec(t *testing.T, s *kurzv1alpha1.LinkSpec) {
	t.Helper()
	check := func(what, v string, fn func(string) string) {
		if msg := fn(v); msg != "" {
			t.Fatalf("accepted %s %q: %s", what, v, msg)
		}
	}
	check("key", s.Key, validation.Key)
	check("domain", string(s.Domain), validation.Hostname)
	check("url", string(s.URL), validation.URL)
	for _, u := range []*kurzv1alpha1.URL{s.IOS, s.Android, s.ExpiredRedirectURL} {
		if u != nil {
			check("url", string(*u), validation.URL)
		}
	}
	if s.UTM != nil {
		for _, v := range []*string{s.UTM.Source, s.UTM.Medium, s.UTM.Campaign, s.UTM.Term, s.UTM.Content, s.UTM.Name} {
			if v != nil {
				check("utm", *v, validation.UTM)
			}
		}
	}
	if s.ExternalID != nil && *s.ExternalID < 0 {
		t.Fatalf("accepted external_id %d", *s.ExternalID)
	}
	for _, tag := range s.Tags {
		check("tag", tag, validation.Tag)
	}
	if msg := validation.Tags(s.Tags); msg != "" {
		t.Fatalf("accepted tags %q: %s", s.Tags, msg)
	}
}
