package importer

import (
	"errors"
	"flag"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/kurz-dev/kurz/internal/flagbind"
	"github.com/kurz-dev/kurz/internal/validation"
)

// Options say how a source is read.
type Options struct {
	// Format is the source's format; FormatAuto tells it from the source.
	Format Format
	// Domain is the domain of links whose source names none (a YOURLS
	// table dump, a kurz CSV without a domain column).
	Domain string `flag:"domain" usage:"Domain of the links whose source names none (a YOURLS table dump, a kurz CSV without a domain column)."`
	// DomainMap moves links from one domain to another (bit.ly to your
	// own): source domain -> kurz domain, both normalized.
	DomainMap map[string]string
	// SkipInvalid imports the valid links of a source that has invalid
	// ones, and lists those; without it, one invalid record stops the
	// import before anything is written.
	SkipInvalid bool `flag:"skip-invalid" usage:"Import the valid links and list the invalid ones, instead of stopping before anything is written."`
}

// DefaultOptions detects the format and moves no domain.
func DefaultOptions() Options {
	return Options{Format: FormatAuto, DomainMap: map[string]string{}}
}

// BindFlags registers --format, --domain, --map-domain and --skip-invalid.
func (o *Options) BindFlags(fs *flag.FlagSet) {
	flagbind.Fields(fs, o)
	names := make([]string, 0, len(formats)+1)
	for _, f := range Formats() {
		names = append(names, string(f))
	}
	fs.Func("format", fmt.Sprintf("Source format: %s (default %q: told from the CSV header or the JSON's shape).", strings.Join(names, ", "), FormatAuto), func(s string) error {
		o.Format = Format(s)
		return nil
	})
	fs.Func("map-domain", "Move links from a source domain to a kurz domain, OLD=NEW (repeatable), e.g. bit.ly=go.example.com.", func(s string) error {
		from, to, ok := strings.Cut(s, "=")
		if !ok {
			return fmt.Errorf("%q is not OLD=NEW", s)
		}
		if o.DomainMap == nil {
			o.DomainMap = map[string]string{}
		}
		o.DomainMap[validation.NormalizeHostname(from)] = validation.NormalizeHostname(to)
		return nil
	})
}

// Validate checks the options; every message names the flag.
func (o Options) Validate() error {
	var errs []error
	if !slices.Contains(Formats(), o.Format) {
		errs = append(errs, fmt.Errorf("--format %q: not one of %v", o.Format, Formats()))
	}
	if o.Domain != "" {
		if msg := validation.Hostname(validation.NormalizeHostname(o.Domain)); msg != "" {
			errs = append(errs, fmt.Errorf("--domain %q %s", o.Domain, msg))
		}
	}
	froms := make([]string, 0, len(o.DomainMap))
	for from := range o.DomainMap {
		froms = append(froms, from)
	}
	sort.Strings(froms)
	for _, from := range froms {
		for _, h := range []string{from, o.DomainMap[from]} {
			if msg := validation.Hostname(h); msg != "" {
				errs = append(errs, fmt.Errorf("--map-domain %s=%s: %q %s", from, o.DomainMap[from], h, msg))
			}
		}
	}
	return errors.Join(errs...)
}
