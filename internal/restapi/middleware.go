package restapi

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"runtime/debug"
	"strconv"
	"time"

	logf "sigs.k8s.io/controller-runtime/pkg/log"
)

// statusRecorder remembers the status written, for metrics.
type statusRecorder struct {
	http.ResponseWriter
	status int
}

func (r *statusRecorder) WriteHeader(status int) {
	if r.status == 0 {
		r.status = status
	}
	r.ResponseWriter.WriteHeader(status)
}

func (r *statusRecorder) Write(b []byte) (int, error) {
	if r.status == 0 {
		r.status = http.StatusOK
	}
	return r.ResponseWriter.Write(b)
}

func (r *statusRecorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }

// recoverPanics turns a panic into a 500 (when nothing was written yet) and
// a log line with the stack, instead of a dropped connection.
func recoverPanics(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() {
			if v := recover(); v != nil {
				if v == http.ErrAbortHandler {
					panic(v)
				}
				logf.FromContext(r.Context()).Error(fmt.Errorf("panic: %v", v), "handler panicked", "stack", string(debug.Stack()))
				writeError(w, r, errInternal)
			}
		}()
		next.ServeHTTP(w, r)
	})
}

// instrument counts requests by route and status and observes latency.
func instrument(route string, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		rec := &statusRecorder{ResponseWriter: w}
		defer func() {
			status := rec.status
			if status == 0 {
				status = http.StatusOK
			}
			requestsTotal.WithLabelValues(route, strconv.Itoa(status)).Inc()
			requestDuration.WithLabelValues(route).Observe(time.Since(start).Seconds())
		}()
		next.ServeHTTP(rec, r)
	})
}

// limitBody caps the request body at limit bytes; reading past it fails
// with http.MaxBytesError, answered 413.
func limitBody(limit int64, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.ContentLength > limit {
			writeError(w, r, tooLarge(limit))
			return
		}
		r.Body = http.MaxBytesReader(w, r.Body, limit)
		next.ServeHTTP(w, r)
	})
}

type callerKey struct{}

func callerFrom(ctx context.Context) *caller {
	c, _ := ctx.Value(callerKey{}).(*caller)
	return c
}

// authenticate resolves the bearer token (or the console's session
// cookie, which carries one: requestToken) to a caller (401 otherwise) and
// checks that it may do verb on resource in its workspace (403 otherwise);
// an empty verb checks no right (GET /api/v1/me).
// A token not known to be good first passes the per-client limit on
// unauthenticated requests: only then may it cost a TokenReview.
func (s *server) authenticate(verb, resource string, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		token, err := s.requestToken(r)
		if err != nil {
			writeError(w, r, err)
			return
		}
		key := hashToken(token)
		c, refused := s.auth.cached(key)
		if c == nil {
			if err := s.admitUnknown(r); err != nil {
				writeError(w, r, err)
				return
			}
			if refused {
				writeError(w, r, errUnauthenticated)
				return
			}
			var err error
			if c, err = s.auth.authenticate(r.Context(), token, key); err != nil {
				writeError(w, r, err)
				return
			}
		}
		if verb != "" {
			if err := s.auth.authorize(r.Context(), c, verb, resource); err != nil {
				writeError(w, r, err)
				return
			}
		}
		ctx := context.WithValue(r.Context(), callerKey{}, c)
		next.ServeHTTP(w, r.WithContext(ctx))
	})
}

// admitUnknown takes one request from the client's unauthenticated budget
// (--api-unauthenticated-rate-limit), or answers 429.
func (s *server) admitUnknown(r *http.Request) error {
	if s.unknownLimiter == nil {
		return nil
	}
	ok, _, retryAfter := s.unknownLimiter.Take(s.clientKey(r), 1, time.Now())
	if !ok {
		return tooManyAttempts(retryAfter)
	}
	return nil
}

// rateLimit allows each caller (ServiceAccount) opts.RateLimit requests a
// minute, whichever of its tokens it uses, and says so in X-RateLimit-*
// headers; past it, 429 with Retry-After.
func (s *server) rateLimit(next http.Handler) http.Handler {
	if s.limiter == nil {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c := callerFrom(r.Context())
		ok, remaining, retryAfter := s.limiter.Take(c.limitKey, 1, time.Now())
		h := w.Header()
		h.Set("X-RateLimit-Limit", strconv.Itoa(s.opts.RateLimit))
		h.Set("X-RateLimit-Remaining", strconv.Itoa(remaining))
		if !ok {
			writeError(w, r, tooManyAttempts(retryAfter))
			return
		}
		next.ServeHTTP(w, r)
	})
}

// tooManyAttempts is Laravel's 429, with Retry-After in whole seconds.
func tooManyAttempts(retryAfter time.Duration) *apiError {
	return &apiError{
		status:     http.StatusTooManyRequests,
		message:    "Too Many Attempts.",
		retryAfter: max(1, int(math.Ceil(retryAfter.Seconds()))),
	}
}
