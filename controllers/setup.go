// Package controllers holds the Link and Domain reconcilers.
package controllers

import (
	"flag"

	ctrl "sigs.k8s.io/controller-runtime"
)

// Options configure the controllers.
type Options struct{}

// DefaultOptions returns the production defaults.
func DefaultOptions() Options { return Options{} }

// BindFlags registers the controllers' flags on fs.
func (o *Options) BindFlags(fs *flag.FlagSet) {}

// Setup adds the controllers to mgr. They run on the elected leader only.
func Setup(mgr ctrl.Manager, o Options) error { return nil }
