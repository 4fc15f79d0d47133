package clicks

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/kurz-dev/kurz/internal/flagbind"
)

// Options configure the Writer. The redirect server's options hold them,
// so `kurz manager` and `kurz dev` bind these flags with its own.
type Options struct {
	// FlushInterval is how often counted clicks are written to status.
	FlushInterval time.Duration `flag:"click-flush-interval" usage:"How often counted clicks are written to the Links' status."`
	// FlushQPS bounds the rate of click status writes of this replica.
	FlushQPS float64 `flag:"click-flush-qps" usage:"Maximum click status writes per second of one replica."`
	// Spool is a file where a replica keeps the clicks it cannot write
	// (API server unreachable): from the first flush round that fails until
	// one writes everything, and on shutdown; the next start replays and
	// then removes it. Empty: such clicks are lost on shutdown.
	Spool string `flag:"click-spool" usage:"File where clicks that cannot be written (API server unreachable) are kept, from the first flush that fails and on shutdown, for the next start, which replays them; written only while such clicks are pending. Its directory must be writable and survive restarts (default: none, such clicks are lost on shutdown)."`
	// SpoolSizeLimit is the size limit, in bytes, of the volume the spool
	// is in (the deploy manifests' emptyDir sizeLimit, set from the same
	// number): the spool is kept below half of it (see spoolCap), and the
	// clicks that do not fit are dropped and counted.
	SpoolSizeLimit int64
}

// DefaultOptions returns the production defaults.
func DefaultOptions() Options {
	return Options{
		FlushInterval: 10 * time.Second,
		FlushQPS:      50,
		// The deploy manifests' emptyDir (config/manager); tens of
		// thousands of pending Links (see spoolCap and docs/reliability.md).
		SpoolSizeLimit: 64 << 20,
	}
}

// BindFlags registers the click flags on fs.
func (o *Options) BindFlags(fs *flag.FlagSet) {
	flagbind.Fields(fs, o)
	fs.Var((*byteSize)(&o.SpoolSizeLimit), "click-spool-size-limit", "Size limit of the volume --click-spool is in (a quantity: 64Mi; the deploy manifests set it from their emptyDir's sizeLimit). The spool stays below half of it, less 16Ki and the .corrupt copies beside it (its atomic rewrite holds two copies for a moment); past that, the clicks of the Links with the fewest pending clicks are dropped and counted in kurz_redirect_clicks_dropped_total.")
}

// Validate reports options that cannot work; every message names the flag.
// It looks at the values only: what --click-spool names on disk is checked
// by New (checkSpool), since `kurz dev` validates its flags before it
// creates the data directory the spool lives in.
func (o Options) Validate() error {
	var errs []error
	if o.FlushInterval <= 0 {
		errs = append(errs, errors.New("--click-flush-interval must be positive"))
	}
	if o.FlushQPS <= 0 {
		errs = append(errs, errors.New("--click-flush-qps must be positive"))
	}
	if o.SpoolSizeLimit < minSpoolSizeLimit {
		errs = append(errs, fmt.Errorf("--click-spool-size-limit must be at least %s, not %d bytes", resource.NewQuantity(minSpoolSizeLimit, resource.BinarySI), o.SpoolSizeLimit))
	}
	return errors.Join(errs...)
}

// byteSize is a flag of a size in bytes written as a quantity (64Mi, 1G,
// 65536), like a volume's sizeLimit.
type byteSize int64

func (b *byteSize) String() string {
	return resource.NewQuantity(int64(*b), resource.BinarySI).String()
}

func (b *byteSize) Set(s string) error {
	q, err := resource.ParseQuantity(s)
	if err != nil {
		return err
	}
	n, ok := q.AsInt64()
	if !ok {
		return fmt.Errorf("%s is not a whole number of bytes", s)
	}
	*b = byteSize(n)
	return nil
}

// checkSpool refuses a --click-spool whose directory is missing or that is
// itself a directory: the spool is written only when kube-apiserver is
// unreachable, too late to find out.
func (o Options) checkSpool() error {
	if o.Spool == "" {
		return nil
	}
	if st, err := os.Stat(filepath.Dir(o.Spool)); err != nil || !st.IsDir() {
		return fmt.Errorf("--click-spool %s: its directory must exist", o.Spool)
	}
	if st, err := os.Stat(o.Spool); err == nil && st.IsDir() {
		return fmt.Errorf("--click-spool %s is a directory, not a file", o.Spool)
	}
	return nil
}
