package otlp

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"sync/atomic"
	"time"

	collogs "go.opentelemetry.io/proto/otlp/collector/logs/v1"
	"google.golang.org/protobuf/proto"

	"github.com/kurz-dev/kurz/internal/analytics"
)

// maxBackoff caps the wait between attempts and a Retry-After.
const maxBackoff = 30 * time.Second

// ErrClosed is Write's error after Close.
var ErrClosed = errors.New("analytics OTLP exporter closed")

// Exporter is an analytics.Writer that sends batches to an OTLP/HTTP
// endpoint. Write is called by one goroutine at a time (the writer's).
type Exporter struct {
	opts   Options
	url    string
	client *http.Client
	closed atomic.Bool
	// sleep waits d or until ctx ends (a test may shorten it).
	sleep func(ctx context.Context, d time.Duration) error
}

var _ analytics.Writer = (*Exporter)(nil)

// New returns an Exporter for o (o.Endpoint must be set).
func New(o Options) (*Exporter, error) {
	if o.Endpoint == "" {
		return nil, errors.New("--analytics-otlp-endpoint is empty")
	}
	if err := o.Validate(); err != nil {
		return nil, err
	}
	u, _ := logsURL(o.Endpoint)
	// Its own transport: a bounded pool, connect and header timeouts
	// below the request's.
	tr := &http.Transport{
		Proxy:                 http.ProxyFromEnvironment,
		DialContext:           (&net.Dialer{Timeout: min(o.Timeout, 5*time.Second), KeepAlive: 30 * time.Second}).DialContext,
		MaxIdleConns:          2,
		MaxConnsPerHost:       2,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   min(o.Timeout, 5*time.Second),
		ResponseHeaderTimeout: o.Timeout,
		ForceAttemptHTTP2:     true,
	}
	return &Exporter{opts: o, url: u, client: &http.Client{Transport: tr}, sleep: sleepCtx}, nil
}

// Write sends b's events as log records, in requests of at most
// MaxRecords. A batch partly sent before an error is sent whole again by
// a retry of the writer: the records carry the batch id.
func (x *Exporter) Write(ctx context.Context, b analytics.Batch) error {
	if x.closed.Load() {
		return ErrClosed
	}
	now := time.Now()
	for i := 0; i < len(b.Events); i += x.opts.MaxRecords {
		part := b.Events[i:min(i+x.opts.MaxRecords, len(b.Events))]
		body, err := proto.Marshal(Request(b.ID, part, now))
		if err != nil {
			return fmt.Errorf("analytics OTLP export: %w", err)
		}
		if err := x.send(ctx, body); err != nil {
			return fmt.Errorf("analytics OTLP export to %s: %w", x.url, err)
		}
	}
	return nil
}

// Close stops the exporter; a Write after it fails.
func (x *Exporter) Close() error {
	if x.closed.CompareAndSwap(false, true) {
		x.client.CloseIdleConnections()
	}
	return nil
}

// send posts one request, retrying what OTLP says is retryable.
func (x *Exporter) send(ctx context.Context, body []byte) error {
	wait := x.opts.Backoff
	var last error
	for attempt := 1; ; attempt++ {
		retry, after, err := x.attempt(ctx, body)
		if err == nil {
			return nil
		}
		last = err
		if !retry || attempt >= x.opts.Attempts {
			if attempt > 1 {
				return fmt.Errorf("%w (attempt %d)", last, attempt)
			}
			return last
		}
		d := wait
		if after > 0 {
			d = after
		}
		if err := x.sleep(ctx, min(d, maxBackoff)); err != nil {
			return fmt.Errorf("%w; then %w", last, err)
		}
		wait = min(wait*2, maxBackoff)
	}
}

// attempt posts body once: whether a failure may be retried, and after
// how long the server asked for.
func (x *Exporter) attempt(ctx context.Context, body []byte) (retry bool, after time.Duration, err error) {
	if err := ctx.Err(); err != nil {
		return false, 0, err
	}
	rctx, cancel := context.WithTimeout(ctx, x.opts.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(rctx, http.MethodPost, x.url, bytes.NewReader(body))
	if err != nil {
		return false, 0, err
	}
	req.Header.Set("Content-Type", "application/x-protobuf")
	for k, v := range x.opts.Headers {
		req.Header.Set(k, v)
	}
	resp, err := x.client.Do(req)
	if err != nil {
		// The caller's own deadline or cancellation ends the Write; a
		// transport error or this attempt's timeout is worth another try.
		return ctx.Err() == nil, 0, err
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	switch resp.StatusCode {
	case http.StatusOK:
		var r collogs.ExportLogsServiceResponse
		if err := proto.Unmarshal(data, &r); err == nil {
			if ps := r.GetPartialSuccess(); ps.GetRejectedLogRecords() > 0 {
				return false, 0, fmt.Errorf("the receiver rejected %d records: %s", ps.GetRejectedLogRecords(), ps.GetErrorMessage())
			}
		}
		return false, 0, nil
	case http.StatusTooManyRequests, http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		return true, retryAfter(resp.Header.Get("Retry-After")), fmt.Errorf("answered %s", resp.Status)
	}
	return false, 0, fmt.Errorf("answered %s (not retried)", resp.Status)
}

// retryAfter is a Retry-After in seconds (an HTTP date is ignored: the
// backoff applies).
func retryAfter(v string) time.Duration {
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 {
		return 0
	}
	return time.Duration(n) * time.Second
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
