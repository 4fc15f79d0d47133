package otlp

import (
	"errors"
	"flag"
	"fmt"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/kurz-dev/kurz/internal/flagbind"
)

// HeadersEnv is the environment variable the headers come from.
const HeadersEnv = "OTEL_EXPORTER_OTLP_HEADERS"

// Options configure an Exporter. Start from DefaultOptions.
type Options struct {
	// Endpoint is the collector's OTLP/HTTP base URL (http://collector:4318);
	// records go to its /v1/logs, or to Endpoint itself when its path
	// already ends in /v1/logs. Empty: no export.
	Endpoint string `flag:"analytics-otlp-endpoint" usage:"OTLP/HTTP endpoint (e.g. http://otel-collector:4318) to export click analytics to as OpenTelemetry log records, one per aggregated row; headers come from OTEL_EXPORTER_OTLP_HEADERS. Empty: no export."`
	// Headers are sent with every request (ParseHeaders reads them from
	// HeadersEnv). They may hold credentials: never logged.
	Headers map[string]string
	// Timeout bounds one request (connecting, sending, the answer).
	Timeout time.Duration `flag:"analytics-otlp-timeout" usage:"Longest time one OTLP export request may take; a failed request is retried with backoff within the writer's flush."`
	// Attempts bounds the tries of one request (429, 5xx, transport errors).
	Attempts int
	// Backoff is the first wait between attempts, doubled each time up to
	// maxBackoff.
	Backoff time.Duration
	// MaxRecords bounds the records of one request.
	MaxRecords int
}

// DefaultOptions returns every default.
func DefaultOptions() Options {
	return Options{Timeout: 10 * time.Second, Attempts: 5, Backoff: 500 * time.Millisecond, MaxRecords: 2000}
}

// BindFlags registers --analytics-otlp-endpoint and --analytics-otlp-timeout.
func (o *Options) BindFlags(fs *flag.FlagSet) { flagbind.Fields(fs, o) }

// Validate refuses options New cannot export with, naming the flag; it
// never repeats a header's value.
func (o Options) Validate() error {
	var errs []error
	if o.Endpoint != "" {
		if _, err := logsURL(o.Endpoint); err != nil {
			errs = append(errs, fmt.Errorf("--analytics-otlp-endpoint %q: %w", o.Endpoint, err))
		}
	}
	if o.Timeout <= 0 {
		errs = append(errs, fmt.Errorf("--analytics-otlp-timeout must be positive, got %s", o.Timeout))
	}
	if o.Attempts < 1 {
		errs = append(errs, fmt.Errorf("analytics OTLP export: attempts %d below 1", o.Attempts))
	}
	if o.Backoff <= 0 {
		errs = append(errs, fmt.Errorf("analytics OTLP export: backoff %s not positive", o.Backoff))
	}
	if o.MaxRecords < 1 {
		errs = append(errs, fmt.Errorf("analytics OTLP export: max records %d below 1", o.MaxRecords))
	}
	for k := range o.Headers {
		if k == "" || strings.ContainsAny(k, " \t\r\n:") {
			errs = append(errs, fmt.Errorf("%s: header name %q is not a token", HeadersEnv, k))
		}
	}
	return errors.Join(errs...)
}

// logsURL is the URL records are posted to.
func logsURL(endpoint string) (string, error) {
	u, err := url.Parse(endpoint)
	if err != nil {
		return "", err
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return "", errors.New("want an http:// or https:// URL")
	}
	if u.Host == "" {
		return "", errors.New("no host")
	}
	if !strings.HasSuffix(u.Path, "/v1/logs") {
		u.Path = strings.TrimSuffix(u.Path, "/") + "/v1/logs"
	}
	return u.String(), nil
}

// ParseHeaders reads headers in OTEL_EXPORTER_OTLP_HEADERS' form:
// key=value pairs separated by commas, keys and values URL-encoded. The
// error names the pair's position, never its value.
func ParseHeaders(s string) (map[string]string, error) {
	out := map[string]string{}
	for i, pair := range strings.Split(s, ",") {
		if strings.TrimSpace(pair) == "" {
			continue
		}
		k, v, ok := strings.Cut(pair, "=")
		if !ok {
			return nil, fmt.Errorf("%s: pair %d has no '='", HeadersEnv, i+1)
		}
		k, err1 := url.QueryUnescape(strings.TrimSpace(k))
		v, err2 := url.QueryUnescape(strings.TrimSpace(v))
		if err1 != nil || err2 != nil || k == "" {
			return nil, fmt.Errorf("%s: pair %d is not key=value URL-encoded", HeadersEnv, i+1)
		}
		out[k] = v
	}
	return out, nil
}

// HeadersFromEnv sets o.Headers from OTEL_EXPORTER_OTLP_HEADERS (unset or
// empty: none), for the composition root to call after parsing flags.
func (o *Options) HeadersFromEnv() error {
	h, err := ParseHeaders(os.Getenv(HeadersEnv))
	if err != nil {
		return err
	}
	if len(h) > 0 {
		o.Headers = h
	}
	return nil
}
