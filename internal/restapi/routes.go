package restapi

import (
	"fmt"
	"net/http"
	"path"
	"strings"

	"github.com/kurz-dev/kurz/internal/console"
)

// handlerFunc is an API handler: it writes a success itself and returns
// any failure, which writeError answers.
type handlerFunc func(w http.ResponseWriter, r *http.Request, c *caller) error

// route is one operation of the API and the access it needs.
type route struct {
	pattern  string // Go 1.22 mux pattern, also the metrics label
	verb     string // Kubernetes verb checked with a SubjectAccessReview; "" checks none (any caller)
	resource string // links, domains or webhooks
	handle   handlerFunc
	// maxBody bounds the request body; 0 means maxBodyBytes.
	maxBody int64
}

func (s *server) routes() []route {
	return append([]route{
		{"GET /api/v1/links", "list", "links", s.listLinks, 0},
		{"POST /api/v1/links", "create", "links", s.createLink, 0},
		{"GET /api/v1/links/lookup", "get", "links", s.lookupLink, 0},
		// A bulk request needs the verb of its items: each item is that
		// verb on one link.
		{"POST /api/v1/links/bulk", "create", "links", s.bulkCreateLinks, maxBulkBodyBytes},
		{"PATCH /api/v1/links/bulk", "update", "links", s.bulkUpdateLinks, maxBulkBodyBytes},
		{"DELETE /api/v1/links/bulk", "delete", "links", s.bulkDeleteLinks, maxBulkBodyBytes},
		{"GET /api/v1/links/{id}", "get", "links", s.showLink, 0},
		{"PUT /api/v1/links/{id}", "update", "links", s.updateLink, 0},
		{"DELETE /api/v1/links/{id}", "delete", "links", s.deleteLink, 0},
		{"PUT /api/v1/links/{id}/qr-code", "get", "links", s.linkQRCode, 0},
		// Reading analytics needs get on links, for one link or the
		// workspace's.
		{"GET /api/v1/links/{id}/analytics", "get", "links", s.linkAnalytics, 0},
		{"GET /api/v1/analytics", "get", "links", s.workspaceAnalytics, 0},
		{"GET /api/v1/tags", "list", "links", s.listTags, 0},
		{"GET /api/v1/domains", "list", "domains", s.listDomains, 0},
		{"POST /api/v1/domains", "create", "domains", s.createDomain, 0},
		{"PUT /api/v1/domains/{id}", "update", "domains", s.updateDomain, 0},
		{"DELETE /api/v1/domains/{id}", "delete", "domains", s.deleteDomain, 0},
		// Any caller may ask what it may do; the answer is its own.
		{"GET /api/v1/me", "", "", s.showMe, 0},
	}, s.webhookRoutes()...)
}

// openAPIRoute serves the API description; it needs no token (it holds no
// data, and clients read it before they have one).
const openAPIRoute = "GET /api/v1/openapi.json"

// consoleRoute serves the web console (internal/console).
const consoleRoute = "GET " + console.Prefix

// handler builds the whole server: each route behind its middleware chain
// (metrics, body limit, auth, rate limit), the mux's own 404 and 405 turned
// into JSON, and panics recovered around everything.
func (s *server) handler() http.Handler {
	mux := http.NewServeMux()
	for _, rt := range s.routes() {
		h := s.serve(rt.handle)
		h = s.rateLimit(h)
		h = s.authenticate(rt.verb, rt.resource, h)
		limit := rt.maxBody
		if limit == 0 {
			limit = maxBodyBytes
		}
		h = limitBody(limit, h)
		mux.Handle(rt.pattern, instrument(rt.pattern, h))
	}
	for pattern, h := range s.sessionRoutes() {
		mux.Handle(pattern, instrument(pattern, limitBody(maxBodyBytes, h)))
	}
	mux.Handle(openAPIRoute, instrument(openAPIRoute, http.HandlerFunc(serveOpenAPI)))
	// The console's static files: no token needed (they hold no data; the
	// console signs in at sessionPath and its cookie authenticates it to
	// the routes above).
	mux.Handle(consoleRoute, instrument(consoleRoute, console.Handler()))
	mux.Handle("GET "+strings.TrimSuffix(console.Prefix, "/"), instrument(consoleRoute, http.RedirectHandler(console.Prefix, http.StatusMovedPermanently)))
	return recoverPanics(jsonFallback(mux))
}

// serve adapts a handlerFunc, answering its error.
func (s *server) serve(h handlerFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := h(w, r, callerFrom(r.Context())); err != nil {
			writeError(w, r, err)
		}
	})
}

// jsonFallback answers what no route matches as JSON: the mux would write
// plain-text 404 and 405 pages. The 405 keeps the mux's Allow header.
func jsonFallback(mux *http.ServeMux) http.Handler {
	unmatched := instrument(routeUnmatched, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h, _ := mux.Handler(r)
		rec := &headerRecorder{header: http.Header{}}
		h.ServeHTTP(rec, r)
		route := strings.TrimPrefix(r.URL.Path, "/")
		if route == "" {
			route = "/"
		}
		switch rec.status {
		case http.StatusMethodNotAllowed:
			allow := rec.header.Get("Allow")
			w.Header().Set("Allow", allow)
			writeError(w, r, newError(http.StatusMethodNotAllowed, fmt.Sprintf(
				"The %s method is not supported for route %s. Supported methods: %s.", r.Method, route, allow)))
		default: // not found, or a redirect of an unclean path
			writeError(w, r, newError(http.StatusNotFound, fmt.Sprintf("The route %s could not be found.", route)))
		}
	}))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// The mux would redirect unclean paths ("/api//v1", "/a/../b")
		// with an HTML body; an API client gets a JSON 404 instead.
		// A trailing slash is clean (the console's /console/); the mux has
		// no API route ending in one, so an API path with it is a 404.
		if p := r.URL.Path; p != "" && path.Clean(p) != p && path.Clean(p)+"/" != p {
			unmatched.ServeHTTP(w, r)
			return
		}
		if _, pattern := mux.Handler(r); pattern != "" {
			mux.ServeHTTP(w, r)
			return
		}
		unmatched.ServeHTTP(w, r)
	})
}

// headerRecorder captures what the mux's fallback handlers write.
type headerRecorder struct {
	header http.Header
	status int
}

func (h *headerRecorder) Header() http.Header { return h.header }
func (h *headerRecorder) WriteHeader(status int) {
	if h.status == 0 {
		h.status = status
	}
}
func (h *headerRecorder) Write(b []byte) (int, error) {
	if h.status == 0 {
		h.status = http.StatusOK
	}
	return len(b), nil // the mux's own plain-text body is replaced
}
