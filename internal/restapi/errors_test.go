package restapi

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	. "github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

var linkGR = schema.GroupResource{Group: "kurz.dev", Resource: "links"}

// TestKubernetesErrorsMapping covers the one place Kubernetes errors
// become answers, including those a running test cluster will not produce
// on demand (an unreachable apiserver, timeouts).
func TestKubernetesErrorsMapping(t *testing.T) {
	invalid := apierrors.NewInvalid(schema.GroupKind{Group: "kurz.dev", Kind: "Link"}, "x", field.ErrorList{
		field.Invalid(field.NewPath("spec", "url"), "javascript:x", "must be an absolute http or https URL with a host"),
		field.TooLong(field.NewPath("spec", "utm", "source"), "", 255),
		field.Duplicate(field.NewPath("spec", "tags").Index(1), "a"),
	})
	tests := []struct {
		name   string
		err    error
		status int
		fields []string
	}{
		{"not found", apierrors.NewNotFound(linkGR, "x"), 404, nil},
		{"conflict", apierrors.NewConflict(linkGR, "x", errors.New("changed")), 409, nil},
		{"already exists", apierrors.NewAlreadyExists(linkGR, "x"), 409, nil},
		{"invalid", fmt.Errorf("create: %w", invalid), 422, []string{"url", "utm_source", "tags.1"}},
		{"unavailable", apierrors.NewServiceUnavailable("etcd down"), 503, nil},
		{"server timeout", apierrors.NewServerTimeout(linkGR, "create", 1), 503, nil},
		{"timeout", apierrors.NewTimeoutError("slow", 1), 503, nil},
		{"throttled", apierrors.NewTooManyRequests("slow down", 1), 503, nil},
		{"deadline", fmt.Errorf("list: %w", context.DeadlineExceeded), 503, nil},
		{"forbidden to kurz itself", apierrors.NewForbidden(linkGR, "x", errors.New("rbac")), 500, nil},
		{"anything else", errors.New("boom"), 500, nil},
		{"too large", &http.MaxBytesError{Limit: 1}, 413, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			rec := httptest.NewRecorder()
			writeError(rec, httptest.NewRequest("GET", "/", nil), tt.err)
			g.Expect(rec.Code).To(Equal(tt.status))
			g.Expect(rec.Header().Get("Content-Type")).To(Equal("application/json"))
			body := rec.Body.String()
			g.Expect(body).NotTo(ContainSubstring("boom"), "no internal detail leaks")
			g.Expect(body).NotTo(ContainSubstring("etcd"))
			if tt.status == 503 {
				g.Expect(rec.Header().Get("Retry-After")).To(Equal("1"))
			}
			for _, f := range tt.fields {
				g.Expect(body).To(ContainSubstring(`"` + f + `":`))
			}
			if tt.fields != nil {
				g.Expect(body).NotTo(ContainSubstring("javascript:x"), "values are not echoed")
				g.Expect(body).To(ContainSubstring("The tags.1 field must not contain duplicates."))
			}
		})
	}
}

func TestPanicsAreServerErrors(t *testing.T) {
	g := NewWithT(t)
	h := recoverPanics(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { panic("bug") }))
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "/api/v1/links", nil))
	g.Expect(rec.Code).To(Equal(http.StatusInternalServerError))
	g.Expect(rec.Body.String()).To(MatchJSON(`{"message":"Server Error."}`))
}

func TestSummary(t *testing.T) {
	g := NewWithT(t)
	var f fieldErrors
	f.add("a", "A.")
	g.Expect(f.summary()).To(Equal("A."))
	f.add("b", "B.")
	g.Expect(f.summary()).To(Equal("A. (and 1 more error)"))
	f.add("b", "B2.")
	g.Expect(f.summary()).To(Equal("A. (and 2 more errors)"))
	g.Expect(apiFieldOf("spec.tags[12]")).To(Equal("tags.12"))
	g.Expect(apiFieldOf("metadata.name")).To(BeEmpty())
}

func TestBearerAndServiceAccounts(t *testing.T) {
	g := NewWithT(t)
	for header, want := range map[string]string{
		"Bearer eyJh.eyJz.c2l-_g":  "eyJh.eyJz.c2l-_g",
		"bearer  eyJh.eyJz.c2ln ":  "eyJh.eyJz.c2ln",
		"Bearer eyJh.eyJz.c2ln x1": "",
		"Bearer abc":               "",
		"Bearer a..c":              "",
		"Bearer a.b.c.d":           "",
		"Bearer a.b+c.d":           "",
		"Bearer a.b.c=":            "",
		"Basic eyJh.eyJz.c2ln":     "",
		"Bearer":                   "",
		"":                         "",
	} {
		r := httptest.NewRequest("GET", "/", nil)
		r.Header.Set("Authorization", header)
		got, ok := bearerToken(r)
		g.Expect(ok).To(Equal(want != ""), header)
		if ok {
			g.Expect(got).To(Equal(want), header)
		}
	}
	for user, want := range map[string]string{
		"system:serviceaccount:team-a:ci": "team-a",
		"system:serviceaccount:team-a":    "",
		"system:serviceaccount::ci":       "",
		"alice":                           "",
		"system:node:n1":                  "",
	} {
		ns, ok := serviceAccountNamespace(user)
		g.Expect(ns).To(Equal(want), user)
		g.Expect(ok).To(Equal(want != ""), user)
	}
	g.Expect(hashToken("secret")).NotTo(ContainSubstring("secret"))
	g.Expect(hashToken("secret")).To(HaveLen(64))
}
