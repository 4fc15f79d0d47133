package manifest

import (
	"errors"
	"flag"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/kurz-dev/kurz/internal/flagbind"
)

// Options say where the manifests go.
type Options struct {
	// Namespace is written into each manifest's metadata; empty leaves it
	// to `kubectl apply -n` or the GitOps tool.
	Namespace string `flag:"namespace" usage:"Namespace (workspace) written into each manifest; empty leaves it to kubectl -n or the GitOps tool."`
	// File is one multi-document YAML file to write; empty and no Dir is
	// stdout.
	File string `flag:"out-file" usage:"Write the manifests to this file (one YAML stream) instead of stdout."`
	// Dir is a directory to write one <name>.yaml per link into.
	Dir string `flag:"out-dir" usage:"Write one <name>.yaml per link into this directory (created if missing) instead of stdout."`
}

// DefaultOptions writes to stdout without a namespace.
func DefaultOptions() Options { return Options{} }

// BindFlags registers --namespace, --out-file and --out-dir.
func (o *Options) BindFlags(fs *flag.FlagSet) { flagbind.Fields(fs, o) }

// Validate checks the options; every message names the flag.
func (o Options) Validate() error {
	var errs []error
	if o.File != "" && o.Dir != "" {
		errs = append(errs, errors.New("--out-file and --out-dir: give one"))
	}
	if o.Namespace != "" {
		if msgs := validation.IsDNS1123Label(o.Namespace); len(msgs) > 0 {
			errs = append(errs, fmt.Errorf("--namespace %q: %s", o.Namespace, strings.Join(msgs, "; ")))
		}
	}
	return errors.Join(errs...)
}

// Set reports whether any option differs from the defaults: they mean
// nothing without -o yaml.
func (o Options) Set() bool { return o != DefaultOptions() }
