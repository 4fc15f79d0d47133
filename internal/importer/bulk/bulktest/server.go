// Package bulktest is an HTTP server that implements the bulk create
// contract of kurz's API (POST /api/v1/links/bulk, issue 26) for the tests
// of kurz import: bearer auth, 1 to 100 items, rate limits that count
// items (answered with X-RateLimit-* and, past them, 429 with
// Retry-After), per-item answers in the single-link endpoint's error
// shape. It keeps the links it created in memory. The real API's own
// tests live with it; this server lets the client be tested without the
// whole of kurz, strictly against the contract.
package bulktest

import (
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/time/rate"
)

// Server is a fake kurz API with only the bulk create endpoint.
type Server struct {
	*httptest.Server

	// Token is the one bearer token accepted.
	Token string
	// Domains are the workspace's domains; an item on another is refused
	// as the API refuses it.
	Domains []string
	// Limit is the caller's rate limit in items a minute (0: none, no
	// headers), a token bucket of that size as kurz's.
	Limit int
	// ThrottleFirst answers the first request 429 with Retry-After: 1.
	ThrottleFirst bool
	// MaxItems answers 413 to a larger body (0: only the contract's 100).
	MaxItems int
	// Answered, when set, is called after each answer (tests interrupt an
	// import with it).
	Answered func(Request)

	mu       sync.Mutex
	bucket   *rate.Limiter
	links    map[string]map[string]any // domain/key -> the item created
	requests []Request
}

// Request is one request the server answered.
type Request struct {
	At     time.Time
	Items  int
	Status int
}

// New starts a server; configure sets its fields before the first request.
func New(t testing.TB, configure func(*Server)) *Server {
	s := &Server{Token: "test-token", Domains: []string{"go.example.com"}, links: map[string]map[string]any{}}
	if configure != nil {
		configure(s)
	}
	if s.Limit > 0 {
		s.bucket = rate.NewLimiter(rate.Limit(float64(s.Limit)/60), s.Limit)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /api/v1/links/bulk", s.bulkCreate)
	s.Server = httptest.NewServer(mux)
	t.Cleanup(s.Close)
	return s
}

// Add makes a link present, as if created before.
func (s *Server) Add(domain, key string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.links[domain+"/"+key] = map[string]any{"domain": domain, "key": key}
}

// Links returns the links the server holds, by domain/key.
func (s *Server) Links() map[string]map[string]any {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make(map[string]map[string]any, len(s.links))
	for k, v := range s.links {
		out[k] = v
	}
	return out
}

// Requests returns the requests answered so far, in order.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.requests)
}

type errorBody struct {
	Message string              `json:"message"`
	Errors  map[string][]string `json:"errors,omitempty"`
}

func (s *Server) answer(w http.ResponseWriter, items, status int, body any) {
	req := Request{At: time.Now(), Items: items, Status: status}
	s.requests = append(s.requests, req)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(body)
	if s.Answered != nil {
		s.Answered(req)
	}
}

func (s *Server) bulkCreate(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if r.Header.Get("Authorization") != "Bearer "+s.Token {
		s.answer(w, 0, http.StatusUnauthorized, errorBody{Message: "Unauthenticated."})
		return
	}
	if !strings.HasPrefix(r.Header.Get("Content-Type"), "application/json") {
		s.answer(w, 0, http.StatusUnsupportedMediaType, errorBody{Message: "Unsupported Media Type."})
		return
	}
	var items []map[string]any
	if err := json.NewDecoder(r.Body).Decode(&items); err != nil {
		s.answer(w, 0, http.StatusBadRequest, errorBody{Message: "Malformed JSON."})
		return
	}
	n := len(items)
	if s.MaxItems > 0 && n > s.MaxItems {
		s.answer(w, n, http.StatusRequestEntityTooLarge, errorBody{Message: "Request Entity Too Large."})
		return
	}
	if n < 1 || n > 100 {
		msg := "The links field must have between 1 and 100 items."
		s.answer(w, n, http.StatusUnprocessableEntity, errorBody{Message: msg, Errors: map[string][]string{"links": {msg}}})
		return
	}
	if s.ThrottleFirst && len(s.requests) == 0 {
		w.Header().Set("Retry-After", "1")
		s.answer(w, n, http.StatusTooManyRequests, errorBody{Message: "Too Many Attempts."})
		return
	}
	if s.bucket != nil {
		now := time.Now()
		ok := s.bucket.AllowN(now, n)
		tokens := s.bucket.TokensAt(now)
		w.Header().Set("X-RateLimit-Limit", strconv.Itoa(s.Limit))
		w.Header().Set("X-RateLimit-Remaining", strconv.Itoa(int(math.Max(0, math.Floor(tokens)))))
		if !ok {
			wait := (float64(n) - tokens) / float64(s.bucket.Limit())
			w.Header().Set("Retry-After", strconv.Itoa(max(1, int(math.Ceil(wait)))))
			s.answer(w, n, http.StatusTooManyRequests, errorBody{Message: "Too Many Attempts."})
			return
		}
	}
	data := make([]map[string]any, n)
	for i, it := range items {
		data[i] = s.create(i, it)
	}
	s.answer(w, n, http.StatusOK, map[string]any{"data": data})
}

// create creates one item, or answers what the single-link endpoint would.
func (s *Server) create(i int, it map[string]any) map[string]any {
	domain, _ := it["domain"].(string)
	key, _ := it["key"].(string)
	url, _ := it["url"].(string)
	errs := map[string][]string{}
	var first string
	fail := func(field, msg string) {
		errs[field] = append(errs[field], msg)
		if first == "" {
			first = msg
		}
	}
	if key == "" {
		fail("key", "The key field is required.")
	} else if _, taken := s.links[domain+"/"+key]; taken {
		fail("key", "The key has already been taken.")
	}
	if !strings.HasPrefix(url, "https://") && !strings.HasPrefix(url, "http://") {
		fail("url", "The url field must be a valid URL.")
	}
	if !slices.Contains(s.Domains, domain) {
		fail("domain", "The selected domain is invalid.")
	}
	if len(errs) > 0 {
		msg := first
		if more := countErrors(errs) - 1; more > 0 {
			msg += fmt.Sprintf(" (and %d more %s)", more, map[bool]string{true: "error", false: "errors"}[more == 1])
		}
		return map[string]any{"index": i, "status": http.StatusUnprocessableEntity, "message": msg, "errors": errs}
	}
	s.links[domain+"/"+key] = it
	link := map[string]any{"id": fmt.Sprintf("00000000-0000-4000-8000-%012d", len(s.links)), "link": "https://" + domain + "/" + key}
	for k, v := range it {
		if k != "password" {
			link[k] = v
		}
	}
	link["password"] = nil
	if _, ok := it["password"]; ok {
		link["password"] = 1
	}
	return map[string]any{"index": i, "status": http.StatusCreated, "link": link}
}

func countErrors(errs map[string][]string) int {
	n := 0
	for _, e := range errs {
		n += len(e)
	}
	return n
}
