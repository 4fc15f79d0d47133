package restapi

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
)

// apiError is an answer other than success: a status, a message and, for
// 422, the fields at fault. Handlers return it (or any error, mapped by
// writeError) instead of writing errors themselves.
type apiError struct {
	status     int
	message    string
	fields     *fieldErrors
	retryAfter int // seconds; 0 means no Retry-After header
}

func (e *apiError) Error() string { return fmt.Sprintf("%d %s", e.status, e.message) }

func newError(status int, message string) *apiError {
	return &apiError{status: status, message: message}
}

// The fixed answers.
var (
	errUnauthenticated = newError(http.StatusUnauthorized, "Unauthenticated.")
	errForbidden       = newError(http.StatusForbidden, "This action is unauthorized.")
	errMalformedJSON   = newError(http.StatusBadRequest, "The request body is not valid JSON.")
	errNotObject       = newError(http.StatusBadRequest, "The request body must be a JSON object.")
	errConflict        = newError(http.StatusConflict, "The resource was changed by another request; retry.")
	errUnavailable     = &apiError{status: http.StatusServiceUnavailable, message: "Service Unavailable.", retryAfter: 1}
	errInternal        = newError(http.StatusInternalServerError, "Server Error.")
)

// tooLarge is the 413 of a body over limit bytes.
func tooLarge(limit int64) *apiError {
	return newError(http.StatusRequestEntityTooLarge, fmt.Sprintf("The request body must not be larger than %d KiB.", limit>>10))
}

func errLinkNotFound() *apiError   { return newError(http.StatusNotFound, "Link not found.") }
func errDomainNotFound() *apiError { return newError(http.StatusNotFound, "Domain not found.") }

// fieldErrors collects 422 messages per API field, in the order the fields
// were checked (the first becomes the summary message, as in Laravel).
type fieldErrors struct {
	order []string
	msgs  map[string][]string
}

func (f *fieldErrors) add(field, msg string) {
	if f.msgs == nil {
		f.msgs = map[string][]string{}
	}
	if _, seen := f.msgs[field]; !seen {
		f.order = append(f.order, field)
	}
	f.msgs[field] = append(f.msgs[field], msg)
}

func (f *fieldErrors) has(field string) bool { _, ok := f.msgs[field]; return ok }

func (f *fieldErrors) empty() bool { return len(f.order) == 0 }

// err returns the 422 for the collected messages, or nil when there are none.
func (f *fieldErrors) err() error {
	if f.empty() {
		return nil
	}
	return &apiError{status: http.StatusUnprocessableEntity, message: f.summary(), fields: f}
}

// summary is Laravel's ValidationException message: the first message, and
// how many more there are.
func (f *fieldErrors) summary() string {
	n := -1
	for _, m := range f.msgs {
		n += len(m)
	}
	first := f.msgs[f.order[0]][0]
	switch {
	case n == 1:
		return first + " (and 1 more error)"
	case n > 1:
		return first + " (and " + strconv.Itoa(n) + " more errors)"
	}
	return first
}

// validationError is a 422 on one field.
func validationError(field, msg string) error {
	var f fieldErrors
	f.add(field, msg)
	return f.err()
}

// errorBody is the JSON of every error answer.
type errorBody struct {
	Message string              `json:"message"`
	Errors  map[string][]string `json:"errors,omitempty"`
}

// writeError is the one place errors become answers: API errors as they
// are, Kubernetes errors mapped to what they mean for the caller, anything
// else a 500 that is logged but not shown.
func writeError(w http.ResponseWriter, r *http.Request, err error) {
	e := toAPIError(r.Context(), err)
	if e.retryAfter > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(e.retryAfter))
	}
	body := errorBody{Message: e.message}
	if e.fields != nil {
		body.Errors = e.fields.msgs
	}
	writeJSON(w, e.status, body)
}

func toAPIError(ctx context.Context, err error) *apiError {
	log := logf.FromContext(ctx)
	var ae *apiError
	var mbe *http.MaxBytesError
	var netErr net.Error
	switch {
	case errors.As(err, &ae):
		return ae
	case errors.As(err, &mbe):
		return tooLarge(mbe.Limit)
	case apierrors.IsNotFound(err):
		// A write raced with a delete: the object is gone.
		return newError(http.StatusNotFound, "Not found.")
	case apierrors.IsConflict(err), apierrors.IsAlreadyExists(err):
		return errConflict
	case apierrors.IsInvalid(err):
		if f := invalidFields(err); f != nil {
			return &apiError{status: http.StatusUnprocessableEntity, message: f.summary(), fields: f}
		}
		log.Error(err, "kube-apiserver refused an object the API validated")
		return errInternal
	case apierrors.IsServiceUnavailable(err), apierrors.IsServerTimeout(err), apierrors.IsTimeout(err),
		apierrors.IsTooManyRequests(err), apierrors.IsInternalError(err),
		errors.Is(err, context.DeadlineExceeded), errors.As(err, &netErr):
		log.Info("kube-apiserver unavailable", "error", err.Error())
		return errUnavailable
	case errors.Is(err, context.Canceled):
		// The client went away; nobody reads this answer.
		return errUnavailable
	}
	log.Error(err, "request failed")
	return errInternal
}

// invalidFields translates the causes of a kube-apiserver Invalid error
// (spec paths such as spec.utm.source) to API fields (utm_source).
func invalidFields(err error) *fieldErrors {
	var status apierrors.APIStatus
	if !errors.As(err, &status) || status.Status().Details == nil {
		return nil
	}
	var f fieldErrors
	for _, c := range status.Status().Details.Causes {
		field := apiFieldOf(c.Field)
		if field == "" {
			continue
		}
		f.add(field, "The "+attribute(field)+" field "+strings.TrimSuffix(causeMessage(c), ".")+".")
	}
	if f.empty() {
		return nil
	}
	return &f
}

func causeMessage(c metav1.StatusCause) string {
	switch c.Type {
	case metav1.CauseTypeFieldValueRequired:
		return "is required"
	case metav1.CauseTypeFieldValueDuplicate:
		return "must not contain duplicates"
	case metav1.CauseTypeFieldValueNotSupported:
		return "has an unsupported value"
	}
	msg := c.Message
	// kube-apiserver puts the value in the message ("Invalid value: ...:
	// reason"); it may hold user data, so keep only the reason.
	if i := strings.LastIndex(msg, ": "); i >= 0 {
		msg = msg[i+2:]
	}
	if msg == "" {
		return "is invalid"
	}
	return msg
}

// specFields maps resource field paths to API fields, for both kinds.
var specFields = map[string]string{
	"spec.domain":             "domain",
	"spec.key":                "key",
	"spec.url":                "url",
	"spec.ios":                "ios",
	"spec.android":            "android",
	"spec.utm.source":         "utm_source",
	"spec.utm.medium":         "utm_medium",
	"spec.utm.campaign":       "utm_campaign",
	"spec.utm.term":           "utm_term",
	"spec.utm.content":        "utm_content",
	"spec.utm.name":           "utm_name",
	"spec.externalID":         "external_id",
	"spec.passwordHash":       "password",
	"spec.expiresAt":          "expires_at",
	"spec.expiredRedirectURL": "expired_redirect_url",
	"spec.tags":               "tags",
	"spec.notFoundURL":        "not_found_url",
	"spec.expiredURL":         "expired_url",
}

func apiFieldOf(path string) string {
	path = strings.TrimPrefix(path, ".")
	if f, ok := specFields[path]; ok {
		return f
	}
	// spec.tags[3] is the tag at index 3.
	if rest, ok := strings.CutPrefix(path, "spec.tags["); ok {
		if i, ok := strings.CutSuffix(rest, "]"); ok {
			return "tags." + i
		}
	}
	return ""
}
