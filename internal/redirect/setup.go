// Package redirect serves https://<domain>/<key> from an in-memory index fed
// by the informer cache, and counts clicks.
package redirect

import (
	"flag"

	ctrl "sigs.k8s.io/controller-runtime"
)

// Options configure the redirect server.
type Options struct {
	BindAddress string
}

// DefaultOptions returns the production defaults.
func DefaultOptions() Options { return Options{BindAddress: ":8081"} }

// BindFlags registers the redirect server's flags on fs.
func (o *Options) BindFlags(fs *flag.FlagSet) {
	fs.StringVar(&o.BindAddress, "redirect-bind-address", o.BindAddress, "Address the redirect server listens on.")
}

// Setup adds the redirect server to mgr. It runs on every replica.
func Setup(mgr ctrl.Manager, o Options) error { return nil }
