package bulk

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/kurz-dev/kurz/internal/importer"
)

// Progress says where progress goes and whether it is a terminal.
type Progress struct {
	W        io.Writer
	Terminal bool
}

// Create creates links through the bulk API, paced to the caller's rate
// limit. The Summary is returned even with an error (the import stopped:
// a token refused, retries exhausted, ctx ended): it says what was done
// before.
func Create(ctx context.Context, links []importer.Link, o Options, out Progress) (*Summary, error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	if o.API == "" {
		return nil, errors.New("--api: required")
	}
	token, err := readToken(o.TokenFile)
	if err != nil {
		return nil, err
	}
	r := &run{
		links:    links,
		opts:     o,
		client:   newClient(o, token),
		pacer:    newPacer(o.BatchSize, time.Now),
		outcomes: make([]outcome, len(links)),
		reasons:  make([]string, len(links)),
		answered: make([]bool, len(links)),
	}
	if plainHTTP(o.API) {
		fmt.Fprintf(out.W, "kurz import: warning: %s is plain http: the token and any passwords cross the network unencrypted\n", o.API)
	}
	r.progress = newProgress(out.W, out.Terminal, o.ProgressInterval, len(links), r.pacer.pace)
	start := time.Now()

	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	var wg sync.WaitGroup
	for range o.Concurrency {
		wg.Go(func() {
			for ctx.Err() == nil {
				lo, hi, ok := r.take()
				if !ok {
					return
				}
				if err := r.send(ctx, lo, hi); err != nil {
					cancel(err)
					return
				}
			}
		})
	}
	wg.Wait()
	r.progress.finish()
	s := r.summary(time.Since(start))
	if err := context.Cause(ctx); err != nil {
		return s, err
	}
	return s, nil
}

// run is one import through the API.
type run struct {
	links    []importer.Link
	opts     Options
	client   *client
	pacer    *pacer
	progress *progress

	mu       sync.Mutex
	next     int
	outcomes []outcome
	reasons  []string
	answered []bool
}

// take hands out the next batch.
func (r *run) take() (lo, hi int, ok bool) {
	n := r.pacer.batch()
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.next >= len(r.links) {
		return 0, 0, false
	}
	lo, hi = r.next, min(r.next+n, len(r.links))
	r.next = hi
	return lo, hi, true
}

// send creates links[lo:hi] in one request, waiting for the rate limit,
// retrying what may be retried and splitting a batch that is too large.
func (r *run) send(ctx context.Context, lo, hi int) error {
	n := hi - lo
	if n > r.pacer.batch() {
		return r.sendChunks(ctx, lo, hi) // batches shrank meanwhile
	}
	items := make([]item, n)
	for i := range items {
		items[i] = newItem(r.links[lo+i])
	}
	failures, limited := 0, 0
	for {
		if err := r.pacer.wait(ctx, n); err != nil {
			return err
		}
		sent := time.Now()
		rep, err := r.client.post(ctx, items)
		status := rep.status
		if err == nil && status == http.StatusOK {
			r.progress.answered(time.Since(sent))
		}
		retry := err != nil || status == http.StatusTooManyRequests || status >= 500
		if err != nil || status >= 500 {
			failures++
		}
		if status == http.StatusTooManyRequests {
			limited++
		}
		r.pacer.done(n, status, rep.header, failures)
		switch {
		case ctx.Err() != nil:
			return ctx.Err()
		case err != nil && failures > r.opts.Retries:
			return fmt.Errorf("POST %s: %w (tried %d times)", r.client.url, err, failures)
		case status >= 500 && failures > r.opts.Retries:
			return fmt.Errorf("POST %s answered %d: %s (tried %d times)", r.client.url, status, rep.message(), failures)
		case status == http.StatusOK:
			return r.record(lo, hi, rep)
		case status == http.StatusTooManyRequests && n > r.pacer.batch():
			// The answer said the limit is smaller than this batch.
			return r.sendChunks(ctx, lo, hi)
		case status == http.StatusRequestEntityTooLarge && n > 1,
			// A bucket smaller than the batch never pays for it: without
			// rate-limit headers to say so, 429 after 429 does.
			status == http.StatusTooManyRequests && limited >= 3 && n > 1:
			r.pacer.shrink(n)
			return r.sendChunks(ctx, lo, hi)
		case retry:
			r.progress.waiting(waitNote(err, rep))
		default:
			return fmt.Errorf("POST %s answered %d: %s", r.client.url, status, hint(status, rep.message()))
		}
	}
}

// sendChunks sends links[lo:hi] in batches of the current size, which a
// 413 may lower on the way.
func (r *run) sendChunks(ctx context.Context, lo, hi int) error {
	for lo < hi {
		next := min(lo+r.pacer.batch(), hi)
		if err := r.send(ctx, lo, next); err != nil {
			return err
		}
		lo = next
	}
	return nil
}

// record counts the outcomes of a 200 to links[lo:hi].
func (r *run) record(lo, hi int, rep reply) error {
	n := hi - lo
	answers, err := rep.items(n)
	if err != nil {
		return err
	}
	outs := make([]outcome, len(answers))
	r.mu.Lock()
	for i, a := range answers {
		outs[i] = a.outcome()
		r.outcomes[lo+i], r.answered[lo+i] = outs[i], true
		if outs[i] == failed {
			r.reasons[lo+i] = a.reason()
		}
	}
	r.mu.Unlock()
	r.progress.add(outs)
	return nil
}

// waitNote says why a batch waits before it is sent again.
func waitNote(err error, rep reply) string {
	if err != nil {
		return fmt.Sprintf("retrying after %v", err)
	}
	if ra := rep.header.Get("Retry-After"); ra != "" {
		return fmt.Sprintf("answered %d, retrying after %ss (Retry-After)", rep.status, ra)
	}
	return fmt.Sprintf("answered %d, retrying", rep.status)
}

// hint explains an answer that stops the import.
func hint(status int, msg string) string {
	switch status {
	case http.StatusUnauthorized:
		return msg + " (is the token an API token, kubectl create token SA --audience kurz, and still valid?)"
	case http.StatusForbidden:
		return msg + " (may the token's ServiceAccount create links.kurz.dev in its namespace?)"
	case http.StatusNotFound, http.StatusMethodNotAllowed:
		return msg + " (is --api the API's base URL, and does it have the bulk API, POST /api/v1/links/bulk?)"
	}
	return msg
}

// plainHTTP reports whether api is http to another machine (loopback,
// such as kurz dev's API, never leaves it).
func plainHTTP(api string) bool {
	u, err := url.Parse(api)
	if err != nil || u.Scheme != "http" {
		return false
	}
	if u.Hostname() == "localhost" {
		return false
	}
	ip := net.ParseIP(u.Hostname())
	return ip == nil || !ip.IsLoopback()
}

// readToken reads the token file: one token, surrounding space ignored.
func readToken(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("--token-file: %w", err)
	}
	token := strings.TrimSpace(string(b))
	if token == "" {
		return "", fmt.Errorf("--token-file %s is empty", path)
	}
	return token, nil
}
