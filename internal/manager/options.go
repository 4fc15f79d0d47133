// Package manager assembles kurz's roles (controllers, API server, redirect
// server) into one controller-runtime manager. `kurz manager` runs it against a
// cluster; `kurz dev` runs it against the local control plane it starts.
package manager

import (
	"flag"

	"github.com/kurz-dev/kurz/controllers"
	"github.com/kurz-dev/kurz/internal/apiserver"
	"github.com/kurz-dev/kurz/internal/redirect"
)

// Options configure the manager and each role. Every field has a flag.
type Options struct {
	MetricsBindAddress     string
	HealthProbeBindAddress string

	LeaderElect             bool
	LeaderElectionNamespace string
	LeaderElectionID        string

	EnableControllers bool
	EnableAPI         bool
	EnableRedirect    bool

	Controllers controllers.Options
	API         apiserver.Options
	Redirect    redirect.Options
}

// DefaultOptions returns the options of a production manager.
func DefaultOptions() Options {
	return Options{
		MetricsBindAddress:     ":8082",
		HealthProbeBindAddress: ":8083",
		LeaderElectionID:       "kurz-controllers.kurz.dev",
		EnableControllers:      true,
		EnableAPI:              true,
		EnableRedirect:         true,
		Controllers:            controllers.DefaultOptions(),
		API:                    apiserver.DefaultOptions(),
		Redirect:               redirect.DefaultOptions(),
	}
}

// BindFlags registers every option on fs, with o's values as defaults.
func (o *Options) BindFlags(fs *flag.FlagSet) {
	fs.StringVar(&o.MetricsBindAddress, "metrics-bind-address", o.MetricsBindAddress, "Address of the Prometheus metrics endpoint (/metrics); \"0\" disables it.")
	fs.StringVar(&o.HealthProbeBindAddress, "health-probe-bind-address", o.HealthProbeBindAddress, "Address of the /healthz and /readyz probes; \"0\" disables them.")
	fs.BoolVar(&o.LeaderElect, "leader-elect", o.LeaderElect, "Elect a leader (Lease) among replicas to run the controllers; the API and redirect servers run on every replica.")
	fs.StringVar(&o.LeaderElectionNamespace, "leader-election-namespace", o.LeaderElectionNamespace, "Namespace of the leader election Lease (default: the pod's namespace).")
	fs.StringVar(&o.LeaderElectionID, "leader-election-id", o.LeaderElectionID, "Name of the leader election Lease.")
	fs.BoolVar(&o.EnableControllers, "controllers", o.EnableControllers, "Run the Link and Domain controllers.")
	fs.BoolVar(&o.EnableAPI, "api", o.EnableAPI, "Run the /api/v1 server.")
	fs.BoolVar(&o.EnableRedirect, "redirect", o.EnableRedirect, "Run the redirect server.")
	o.Controllers.BindFlags(fs)
	o.API.BindFlags(fs)
	o.Redirect.BindFlags(fs)
}
