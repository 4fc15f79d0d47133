package manager

import (
	"net/http"

	"github.com/go-logr/logr"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/metrics/filters"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
)

// authnFailed is what controller-runtime's filter answers, with 500, when
// the TokenReview says no with an error: which is how kube-apiserver
// refuses a malformed, expired or foreign token.
const authnFailed = "Authentication failed\n"

// metricsAuth is controller-runtime's WithAuthenticationAndAuthorization
// (TokenReview, then SubjectAccessReview for get on the path), except that
// a token the TokenReview rejects with an error gets 401, as kube-apiserver
// answers it, instead of 500: a scraper with a bad token is told to fix its
// token, not that kurz is broken.
func metricsAuth(c *rest.Config, hc *http.Client) (metricsserver.Filter, error) {
	inner, err := filters.WithAuthenticationAndAuthorization(c, hc)
	if err != nil {
		return nil, err
	}
	return func(log logr.Logger, h http.Handler) (http.Handler, error) {
		reached := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if aw, ok := w.(*authnWriter); ok {
				aw.reached = true
			}
			h.ServeHTTP(w, r)
		})
		filtered, err := inner(log, reached)
		if err != nil {
			return nil, err
		}
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			aw := &authnWriter{ResponseWriter: w}
			filtered.ServeHTTP(aw, r)
			aw.finish()
		}), nil
	}, nil
}

// authnWriter holds back a 500 written before the metrics handler ran,
// until its body says whether it is the authentication failure.
type authnWriter struct {
	http.ResponseWriter
	reached bool // the request got through to the metrics handler
	held    bool // a 500 from the filter, not written yet
	body    []byte
}

func (w *authnWriter) WriteHeader(code int) {
	if !w.reached && code == http.StatusInternalServerError {
		w.held = true
		return
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *authnWriter) Write(b []byte) (int, error) {
	if w.held {
		w.body = append(w.body, b...)
		return len(b), nil
	}
	return w.ResponseWriter.Write(b)
}

// finish writes the held answer: 401 for the authentication failure, the
// filter's 500 for anything else (a failed SubjectAccessReview).
func (w *authnWriter) finish() {
	if !w.held {
		return
	}
	if string(w.body) == authnFailed {
		http.Error(w.ResponseWriter, "Unauthorized", http.StatusUnauthorized)
		return
	}
	w.ResponseWriter.WriteHeader(http.StatusInternalServerError)
	_, _ = w.ResponseWriter.Write(w.body)
}
