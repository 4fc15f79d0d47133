package restapi

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/kurz-dev/kurz/internal/testenv"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/legacy"
	. "github.com/onsi/gomega"
)

var (
	openAPIOnce   sync.Once
	openAPIDoc    *openapi3.T
	openAPIRouter routers.Router
	openAPIErr    error
)

// loadOpenAPI loads the document the server serves, validates it, and
// builds a router for the test servers.
func loadOpenAPI(t *testing.T) (*openapi3.T, routers.Router) {
	t.Helper()
	openAPIOnce.Do(func() {
		resp, err := http.Get(baseURL + "/api/v1/openapi.json")
		if err != nil {
			openAPIErr = err
			return
		}
		defer resp.Body.Close()
		data, err := io.ReadAll(resp.Body)
		if err != nil {
			openAPIErr = err
			return
		}
		loader := openapi3.NewLoader()
		doc, err := loader.LoadFromData(data)
		if err != nil {
			openAPIErr = err
			return
		}
		if openAPIErr = doc.Validate(context.Background()); openAPIErr != nil {
			return
		}
		// The document's server is "/" (relative to wherever it is served);
		// the router needs the absolute test servers.
		doc.Servers = openapi3.Servers{{URL: baseURL}, {URL: limitedURL}, {URL: analyticsURL}}
		openAPIDoc = doc
		openAPIRouter, openAPIErr = legacy.NewRouter(doc)
		openapi3filter.RegisterBodyDecoder("image/png", openapi3filter.FileBodyDecoder)
		openapi3filter.RegisterBodyDecoder("image/svg+xml", openapi3filter.FileBodyDecoder)
	})
	NewWithT(t).Expect(openAPIErr).NotTo(HaveOccurred(), "the served OpenAPI document")
	return openAPIDoc, openAPIRouter
}

// checkAgainstOpenAPI fails t when an answer is not what the document says
// (status listed for the operation, body matching its schema, headers).
// Requests the document does not describe must be answered 404 or 405.
func checkAgainstOpenAPI(t *testing.T, req *http.Request, reqBody []byte, resp *http.Response, body []byte) {
	t.Helper()
	if t.Name() == "" || req.URL.Path == "/api/v1/openapi.json" {
		return
	}
	_, router := loadOpenAPI(t)
	r := req.Clone(context.Background())
	r.Header.Del("Authorization") // keep tokens out of failure messages
	r.Body = io.NopCloser(bytes.NewReader(reqBody))
	route, params, err := router.FindRoute(r)
	if err != nil || resp.StatusCode == http.StatusMethodNotAllowed {
		NewWithT(t).Expect(resp.StatusCode).To(BeElementOf(http.StatusNotFound, http.StatusMethodNotAllowed),
			"%s %s is not in the document", req.Method, req.URL.Path)
		return
	}
	in := &openapi3filter.ResponseValidationInput{
		RequestValidationInput: &openapi3filter.RequestValidationInput{
			Request: r, PathParams: params, Route: route,
			Options: &openapi3filter.Options{AuthenticationFunc: openapi3filter.NoopAuthenticationFunc},
		},
		Status:  resp.StatusCode,
		Header:  resp.Header,
		Body:    io.NopCloser(bytes.NewReader(body)),
		Options: &openapi3filter.Options{IncludeResponseStatus: true, MultiError: true},
	}
	if err := openapi3filter.ValidateResponse(context.Background(), in); err != nil {
		t.Fatalf("%s %s answered %d %s\nwhich the OpenAPI document does not allow: %v", req.Method, req.URL.Path, resp.StatusCode, truncate(body), err)
	}
}

func truncate(b []byte) string {
	if len(b) > 500 {
		return string(b[:500]) + "..."
	}
	return string(b)
}

// TestOpenAPIDocumentsEveryRoute keeps the document and the routes table
// in step both ways.
func TestOpenAPIDocumentsEveryRoute(t *testing.T) {
	testenv.Need(t)
	g := NewWithT(t)
	doc, _ := loadOpenAPI(t)
	var documented []string
	for path, item := range doc.Paths.Map() {
		for method := range item.Operations() {
			documented = append(documented, method+" "+path)
		}
	}
	want := []string{openAPIRoute}
	for _, rt := range (&server{}).routes() {
		want = append(want, rt.pattern)
	}
	sort.Strings(documented)
	sort.Strings(want)
	g.Expect(documented).To(Equal(want))
}

// TestOpenAPIServed checks the document's own answer.
func TestOpenAPIServed(t *testing.T) {
	testenv.Need(t)
	g := NewWithT(t)
	resp, err := http.Get(baseURL + "/api/v1/openapi.json")
	g.Expect(err).NotTo(HaveOccurred())
	defer resp.Body.Close()
	g.Expect(resp.StatusCode).To(Equal(http.StatusOK))
	g.Expect(resp.Header.Get("Content-Type")).To(Equal("application/json"))
	data, _ := io.ReadAll(resp.Body)
	g.Expect(strings.Contains(string(data), `"openapi": "3.0.3"`)).To(BeTrue())
}
