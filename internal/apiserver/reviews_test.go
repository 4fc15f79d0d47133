package apiserver

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync"
)

// reviewCounter counts the TokenReviews sent through its transport, by
// token, and keeps the audiences each asked for.
type reviewCounter struct {
	mu        sync.Mutex
	counts    map[string]int
	audiences map[string][]string
}

// reviews returns how many TokenReviews of token were sent.
func (rc *reviewCounter) reviews(token string) int {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return rc.counts[token]
}

// askedAudiences returns the audiences of the last review of token.
func (rc *reviewCounter) askedAudiences(token string) []string {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return rc.audiences[token]
}

// wrap is a rest.Config WrapTransport: it reads the body of every
// TokenReview create and passes the request on unchanged.
func (rc *reviewCounter) wrap(next http.RoundTripper) http.RoundTripper {
	return roundTripFunc(func(req *http.Request) (*http.Response, error) {
		if req.Method != http.MethodPost || !strings.HasSuffix(req.URL.Path, "/tokenreviews") || req.Body == nil {
			return next.RoundTrip(req)
		}
		body, err := io.ReadAll(req.Body)
		req.Body.Close()
		if err != nil {
			return nil, err
		}
		var review struct {
			Spec struct {
				Token     string   `json:"token"`
				Audiences []string `json:"audiences"`
			} `json:"spec"`
		}
		if err := json.Unmarshal(body, &review); err == nil {
			rc.mu.Lock()
			rc.counts[review.Spec.Token]++
			if rc.audiences == nil {
				rc.audiences = map[string][]string{}
			}
			rc.audiences[review.Spec.Token] = review.Spec.Audiences
			rc.mu.Unlock()
		}
		req = req.Clone(req.Context())
		req.Body = io.NopCloser(bytes.NewReader(body))
		req.ContentLength = int64(len(body))
		return next.RoundTrip(req)
	})
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }
