package restapi

import (
	"net/http"
	"strings"
	"sync"
)

// writeCounter counts the writes the suite's API servers send to
// kube-apiserver for Links, by namespace: every request to a Link (or its
// status) that is not a read.
type writeCounter struct {
	mu     sync.Mutex
	counts map[string]int
}

// linkWrites counts the writes of the suite's manager (setupSuite).
var linkWrites = &writeCounter{counts: map[string]int{}}

// of returns how many Link writes were sent in namespace ns.
func (wc *writeCounter) of(ns string) int {
	wc.mu.Lock()
	defer wc.mu.Unlock()
	return wc.counts[ns]
}

// wrap is a rest.Config WrapTransport that counts and passes every request
// on unchanged.
func (wc *writeCounter) wrap(next http.RoundTripper) http.RoundTripper {
	return roundTripFunc(func(req *http.Request) (*http.Response, error) {
		if ns, ok := linkWriteNamespace(req); ok {
			wc.mu.Lock()
			wc.counts[ns]++
			wc.mu.Unlock()
		}
		return next.RoundTrip(req)
	})
}

// linkWriteNamespace returns the namespace of a write to Links:
// /apis/kurz.dev/v1alpha1/namespaces/<ns>/links[/<name>[/status]].
func linkWriteNamespace(req *http.Request) (string, bool) {
	switch req.Method {
	case http.MethodGet, http.MethodHead, http.MethodOptions:
		return "", false
	}
	rest, ok := strings.CutPrefix(req.URL.Path, "/apis/kurz.dev/v1alpha1/namespaces/")
	if !ok {
		return "", false
	}
	parts := strings.Split(rest, "/")
	if len(parts) < 2 || parts[1] != "links" {
		return "", false
	}
	return parts[0], true
}
