package bulk

import (
	"errors"
	"flag"
	"fmt"
	"net/url"
	"time"

	"github.com/kurz-dev/kurz/internal/flagbind"
)

// MaxBatch is the most links one bulk request may carry (the contract).
const MaxBatch = 100

// Options say where and how links are created.
type Options struct {
	// API is the base URL of kurz's API, scheme://host[:port][/prefix];
	// requests go to <API>/api/v1/links/bulk.
	API string `flag:"api" usage:"Base URL of kurz's API (e.g. https://kurz.example.com): create the links through POST /api/v1/links/bulk instead of writing manifests."`
	// TokenFile holds the API token.
	TokenFile string `flag:"token-file" usage:"File holding the API token (kubectl create token SA --audience kurz); required with --api."`
	// BatchSize is the number of links per request (lowered to the rate
	// limit when that is smaller).
	BatchSize int `flag:"batch-size" usage:"Links per bulk request, 1 to 100 (lowered to the API's rate limit when that is smaller)."`
	// Concurrency is the number of requests in flight at once.
	Concurrency int `flag:"concurrency" usage:"Bulk requests in flight at once, 1 to 8 (the rate limit paces them all)."`
	// RequestTimeout bounds one request.
	RequestTimeout time.Duration `flag:"request-timeout" usage:"Time limit of one bulk request."`
	// Retries is how often a batch is retried after a 5xx answer or a
	// network error before the import stops (429s wait, they are not
	// counted).
	Retries int
	// ProgressInterval is how often a plain progress line is written when
	// the output is not a terminal.
	ProgressInterval time.Duration
}

// DefaultOptions: batches of 100, two in flight.
func DefaultOptions() Options {
	return Options{
		BatchSize:        MaxBatch,
		Concurrency:      2,
		RequestTimeout:   time.Minute,
		Retries:          5,
		ProgressInterval: 10 * time.Second,
	}
}

// BindFlags registers --api, --token-file, --batch-size, --concurrency and
// --request-timeout.
func (o *Options) BindFlags(fs *flag.FlagSet) { flagbind.Fields(fs, o) }

// Validate checks the options; every message names the flag. The token
// file is read by Create.
func (o Options) Validate() error {
	var errs []error
	if o.API != "" {
		if u, err := url.Parse(o.API); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" {
			errs = append(errs, fmt.Errorf("--api %q: must be an http or https URL with a host, without query", o.API))
		}
		if o.TokenFile == "" {
			errs = append(errs, errors.New("--token-file: required with --api"))
		}
	}
	if o.BatchSize < 1 || o.BatchSize > MaxBatch {
		errs = append(errs, fmt.Errorf("--batch-size must be 1 to %d, got %d", MaxBatch, o.BatchSize))
	}
	if o.Concurrency < 1 || o.Concurrency > 8 {
		errs = append(errs, fmt.Errorf("--concurrency must be 1 to 8, got %d", o.Concurrency))
	}
	if o.RequestTimeout <= 0 {
		errs = append(errs, fmt.Errorf("--request-timeout must be positive, got %s", o.RequestTimeout))
	}
	if o.Retries < 0 {
		errs = append(errs, fmt.Errorf("bulk: Retries must not be negative, got %d", o.Retries))
	}
	if o.ProgressInterval <= 0 {
		errs = append(errs, fmt.Errorf("bulk.Options.ProgressInterval must be positive, not %s", o.ProgressInterval))
	}
	return errors.Join(errs...)
}

// Set reports whether a flag of the API path differs from the defaults.
func (o Options) Set() bool {
	d := DefaultOptions()
	return o.API != d.API || o.TokenFile != d.TokenFile || o.BatchSize != d.BatchSize ||
		o.Concurrency != d.Concurrency || o.RequestTimeout != d.RequestTimeout
}
