package restapi

import (
	_ "embed"
	"net/http"
)

// openAPIDocument describes every route, body and answer of /api/v1. Tests
// load it with kin-openapi and validate real answers against it.
//
//go:embed openapi.json
var openAPIDocument []byte

// serveOpenAPI answers GET /api/v1/openapi.json.
func serveOpenAPI(w http.ResponseWriter, _ *http.Request) {
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Cache-Control", "public, max-age=300")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(openAPIDocument)
}
