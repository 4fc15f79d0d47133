package restapi

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"time"
	"unicode/utf8"

	kurzv1alpha1 "github.com/kurz-dev/kurz/api/v1alpha1"
	"github.com/kurz-dev/kurz/internal/parallel"
)

// Bulk requests (docs/api.md, "Bulk operations"): up to bulkMaxItems links
// a request, each answered as the single-link endpoint would answer it.
const (
	bulkMaxItems = 100
	// bulkWorkers is how many writes of one bulk request are in flight at
	// once. A write costs a few milliseconds, mostly waiting (etcd's
	// commit, the round trip): one after the other, 100 links would take
	// a second or more.
	bulkWorkers = 16
	// bulkWriteTimeout bounds the writes of an atomic request (and their
	// undoing), which go on when the client goes away: all or nothing must
	// stay true without anyone listening.
	bulkWriteTimeout = time.Minute
)

var errNotArray = newError(http.StatusBadRequest, "The request body must be a JSON array.")

// bulkItem answers one item of a bulk request: its index in the request,
// the link's id (PATCH and DELETE), and either its status with the link or
// the error the single-link endpoint would answer (message, errors).
type bulkItem struct {
	Index   int                 `json:"index"`
	ID      string              `json:"id,omitempty"`
	Status  int                 `json:"status"`
	Link    *linkView           `json:"link,omitempty"`
	Message string              `json:"message,omitempty"`
	Errors  map[string][]string `json:"errors,omitempty"`
}

// bulkAnswer is the body of every bulk answer but the refusals.
type bulkAnswer struct {
	Data []bulkItem `json:"data"`
}

// fail records err as the item's answer.
func (it *bulkItem) fail(ctx context.Context, err error) {
	e := toAPIError(ctx, err)
	it.Status, it.Message, it.Link = e.status, e.message, nil
	if e.fields != nil {
		it.Errors = e.fields.msgs
	}
}

// atomicParam reads ?atomic=true (or 1): validate every item first and
// write all of them or none.
func atomicParam(r *http.Request) (bool, error) {
	p := newListParams(r.URL.Query())
	b := p.boolean("atomic")
	return b != nil && *b, p.err()
}

// chargeItems counts a bulk request's n items against the caller's rate
// limit, of which the middleware took one already: a bulk of 100 costs
// what 100 requests do. A request larger than the whole limit could never
// pass, so it is a 422 rather than a 429 to retry forever.
func (s *server) chargeItems(w http.ResponseWriter, c *caller, n int, field string) error {
	if s.limiter == nil || n <= 1 {
		return nil
	}
	if n > s.opts.RateLimit {
		return validationError(field, fmt.Sprintf("The %s field must not have more than %d items: the rate limit is %d a minute.",
			attribute(field), s.opts.RateLimit, s.opts.RateLimit))
	}
	ok, remaining, retryAfter := s.limiter.Take(c.limitKey, n-1, time.Now())
	w.Header().Set("X-RateLimit-Remaining", strconv.Itoa(remaining))
	if !ok {
		return tooManyAttempts(retryAfter)
	}
	return nil
}

// decodeArray reads a bulk body that is a JSON array of 1..bulkMaxItems
// elements (not yet checked one by one); field names it in errors.
func decodeArray(r *http.Request, field string) ([]json.RawMessage, error) {
	b, err := readBody(r)
	if err != nil {
		return nil, err
	}
	b = bytes.TrimSpace(b)
	if len(b) == 0 {
		return nil, validationError(field, "The "+attribute(field)+" field is required.")
	}
	if !utf8.Valid(b) || !json.Valid(b) {
		return nil, errMalformedJSON
	}
	if b[0] != '[' {
		return nil, errNotArray
	}
	var items []json.RawMessage
	if err := json.Unmarshal(b, &items); err != nil {
		return nil, errMalformedJSON
	}
	if len(items) < 1 || len(items) > bulkMaxItems {
		return nil, validationError(field, fmt.Sprintf("The %s field must have between 1 and %d items.", attribute(field), bulkMaxItems))
	}
	return items, nil
}

// decodeIDs reads the ids of a PATCH or DELETE body: 1..bulkMaxItems
// distinct strings. Ids that name no link of the workspace are answered
// per item (404), as the single-link endpoints answer them.
func decodeIDs(f *form) []string {
	_, given := f.raw["ids"]
	list := f.stringList("ids")
	if given && !list.present {
		return nil // not an array of strings: stringList said so
	}
	if list.value == nil {
		f.fail("ids", "is required")
		return nil
	}
	ids := *list.value
	if len(ids) < 1 || len(ids) > bulkMaxItems {
		f.fail("ids", fmt.Sprintf("must have between 1 and %d items", bulkMaxItems))
		return nil
	}
	seen := make(map[string]bool, len(ids))
	for i, id := range ids {
		field := "ids." + strconv.Itoa(i)
		switch id = canonicalID(id); {
		case id == "":
			f.fail(field, "is required")
		case seen[id]:
			f.fail(field, "has a duplicate value")
		}
		seen[id] = true
	}
	return ids
}

// batchError is the 422 of an atomic request some of whose items are
// invalid: each item's errors under "<index>.<field>" (Laravel's names for
// the fields of an array's elements), or "<index>" for an item refused as
// a whole; done says what did not happen ("created").
func batchError(ctx context.Context, errs map[int]error, n int, done string) error {
	var f fieldErrors
	indexes := make([]int, 0, len(errs))
	for i := range errs {
		indexes = append(indexes, i)
	}
	slices.Sort(indexes)
	for _, i := range indexes {
		e := toAPIError(ctx, errs[i])
		if e.fields == nil {
			f.add(strconv.Itoa(i), e.message)
			continue
		}
		for _, field := range e.fields.order {
			for _, msg := range e.fields.msgs[field] {
				f.add(strconv.Itoa(i)+"."+field, msg)
			}
		}
	}
	return &apiError{status: http.StatusUnprocessableEntity,
		message: fmt.Sprintf("%d of %d links are invalid; none was %s.", len(errs), n, done), fields: &f}
}

// writeFailed is the answer of an atomic request whose write of item
// index failed (after every item was found valid): that item's error, its
// fields named "<index>.<field>", and what became of the writes already
// made (undone: what was written is deleted or restored).
func writeFailed(ctx context.Context, index int, err error, undone string) error {
	e := toAPIError(ctx, err)
	out := &apiError{status: e.status, retryAfter: e.retryAfter,
		message: fmt.Sprintf("Link %d failed: %s %s", index, e.message, undone)}
	if e.fields != nil {
		var f fieldErrors
		for _, field := range e.fields.order {
			for _, msg := range e.fields.msgs[field] {
				f.add(strconv.Itoa(index)+"."+field, msg)
			}
		}
		out.fields = &f
	}
	return out
}

// notAttempted is the error of an item a bulk request never got to: the
// client went away (its context ended) or the time ran out.
func notAttempted(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return errUnavailable
}

// settleWrites stamps each written link with stampFn (nil: already
// stamped) and waits until the lists show it, bulkWorkers at a time, so
// that the caller's next read sees every write, as after a single write.
func (s *server) settleWrites(ctx context.Context, objs []*kurzv1alpha1.Link, stampFn func(*kurzv1alpha1.Link, time.Time) bool) {
	_ = forEach(ctx, len(objs), false, func(i int) error {
		if obj := objs[i]; obj != nil {
			if stampFn != nil {
				stamp(ctx, s, obj, stampFn)
			}
			s.links.awaitWrite(ctx, s, obj)
		}
		return nil
	})
}

// forEach runs do for every index in [0, n) on bulkWorkers goroutines.
// With stopOnError, the first error stops the start of further items (the
// ones under way finish) and is returned; otherwise do records its own
// errors.
func forEach(ctx context.Context, n int, stopOnError bool, do func(i int) error) error {
	return parallel.Each(ctx, 0, n, bulkWorkers, func(i int) error {
		err := do(i)
		if stopOnError {
			return err
		}
		return nil
	})
}
