package restapi

import (
	"bytes"
	"io"
	"net/http"
	"strings"
	"sync"

	authenticationv1 "k8s.io/api/authentication/v1"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
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
		// The body is protobuf or JSON; the scheme's deserializer reads both.
		obj, _, err := clientgoscheme.Codecs.UniversalDeserializer().Decode(body, nil, nil)
		if review, ok := obj.(*authenticationv1.TokenReview); err == nil && ok {
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
