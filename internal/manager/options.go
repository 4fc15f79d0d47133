package manager

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/kurz-dev/kurz/controllers"
	"github.com/kurz-dev/kurz/internal/analytics/wiring"
	"github.com/kurz-dev/kurz/internal/flagbind"
	"github.com/kurz-dev/kurz/internal/redirect"
	"github.com/kurz-dev/kurz/internal/restapi"
	"github.com/kurz-dev/kurz/internal/webhooks"
)

// Options configure the manager and each role. Every field has a flag.
type Options struct {
	MetricsBindAddress string `flag:"metrics-bind-address" usage:"Address of the Prometheus metrics endpoint (/metrics); \"0\" disables it."`
	// MetricsSecure serves /metrics over HTTPS, to callers whose bearer
	// token kube-apiserver authenticates (TokenReview) and authorizes
	// (SubjectAccessReview: get on the non-resource URL /metrics).
	MetricsSecure bool `flag:"metrics-secure" usage:"Serve /metrics over HTTPS to callers with a Kubernetes bearer token allowed to get /metrics (ClusterRole kurz-metrics-reader); false: plain HTTP to anyone who can connect."`
	// MetricsCertPath is the directory of the metrics server's certificate
	// (MetricsCertName, MetricsCertKey), reloaded when it changes; empty:
	// a self-signed certificate made at start.
	MetricsCertPath        string `flag:"metrics-cert-path" usage:"Directory of the metrics server's certificate and key, reloaded when they change (default: a self-signed certificate made at start)."`
	MetricsCertName        string `flag:"metrics-cert-name" usage:"File name of the metrics server's certificate in --metrics-cert-path."`
	MetricsCertKey         string `flag:"metrics-cert-key" usage:"File name of the metrics server's private key in --metrics-cert-path."`
	HealthProbeBindAddress string `flag:"health-probe-bind-address" usage:"Address of the /healthz and /readyz probes; \"0\" disables them."`
	// PprofBindAddress serves net/http/pprof ("0": off), for heap
	// profiles of a running replica (hack/bench-scale reads them).
	PprofBindAddress string `flag:"pprof-bind-address" usage:"Address of the Go profiler (/debug/pprof/); \"0\" disables it. It shows internals: keep it on loopback."`

	LeaderElect             bool   `flag:"leader-elect" usage:"Elect a leader (Lease) among replicas to run the controllers; the API and redirect servers run on every replica."`
	LeaderElectionNamespace string `flag:"leader-election-namespace" usage:"Namespace of the leader election Lease (default: the pod's namespace)."`
	LeaderElectionID        string `flag:"leader-election-id" usage:"Name of the leader election Lease."`
	// LeaseDuration is how long standbys wait after the last renewal
	// before they take the Lease over.
	LeaseDuration time.Duration `flag:"leader-election-lease-duration" usage:"How long standbys wait after the leader's last renewal before taking the Lease."`
	// RenewDeadline is how long the leader keeps trying to renew before it
	// stops its controllers (it keeps serving) and campaigns again.
	RenewDeadline time.Duration `flag:"leader-election-renew-deadline" usage:"How long the leader retries renewing the Lease before it stops its controllers (it keeps serving) and campaigns again; less than the lease duration."`
	// RetryPeriod is the wait between two attempts to take or renew it.
	RetryPeriod time.Duration `flag:"leader-election-retry-period" usage:"Wait between attempts to take or renew the Lease; well under the renew deadline."`

	// ShutdownDelay is how long a replica keeps serving after a signal
	// with /readyz failing, so endpoints drop it before it stops listening.
	ShutdownDelay time.Duration `flag:"shutdown-delay" usage:"On SIGTERM, how long to keep serving with /readyz failing (so load balancers stop sending traffic) before draining; a second signal exits at once."`

	EnableControllers bool `flag:"controllers" usage:"Run the Link and Domain controllers."`
	EnableAPI         bool `flag:"api" usage:"Run the /api/v1 server."`
	EnableRedirect    bool `flag:"redirect" usage:"Run the redirect server."`
	// EnableWebhooks delivers Webhooks' events (and runs the Webhook
	// controller where the controllers run). Off, kurz caches no tenant
	// Secret and sends nothing.
	EnableWebhooks bool `flag:"webhooks" usage:"Deliver Webhooks' events (and run the Webhook controller where the controllers run); off, kurz reads no tenant Secret and sends nothing."`

	Controllers controllers.Options
	API         restapi.Options
	Redirect    redirect.Options
	// Analytics is click analytics (--analytics, --analytics-*).
	Analytics wiring.Options
	Webhooks  webhooks.Options
}

// DefaultOptions returns the options of a production manager.
func DefaultOptions() Options {
	return Options{
		MetricsBindAddress:     ":8082",
		MetricsSecure:          true,
		MetricsCertName:        "tls.crt",
		MetricsCertKey:         "tls.key",
		HealthProbeBindAddress: ":8083",
		PprofBindAddress:       "0",
		LeaderElectionID:       "kurz-controllers.kurz.dev",
		// client-go's (and controller-runtime's) defaults.
		LeaseDuration:     15 * time.Second,
		RenewDeadline:     10 * time.Second,
		RetryPeriod:       2 * time.Second,
		ShutdownDelay:     5 * time.Second,
		EnableControllers: true,
		EnableAPI:         true,
		EnableRedirect:    true,
		EnableWebhooks:    true,
		Controllers:       controllers.DefaultOptions(),
		API:               restapi.DefaultOptions(),
		Redirect:          redirect.DefaultOptions(),
		Analytics:         wiring.DefaultOptions(),
		Webhooks:          webhooks.DefaultOptions(),
	}
}

// BindFlags registers every option on fs, with o's values as defaults.
func (o *Options) BindFlags(fs *flag.FlagSet) {
	flagbind.Fields(fs, o)
	o.Controllers.BindFlags(fs)
	o.API.BindFlags(fs)
	o.Redirect.BindFlags(fs)
	o.Analytics.BindFlags(fs)
	o.Webhooks.BindFlags(fs)
}

// Validate rejects options the manager cannot run with, its own and those
// of the roles it runs, each once; every message names its flag as typed
// (--flag). New calls it, so bad flags are reported before anything
// starts, a bad controllers flag (two ways of routing, say) too, not only
// when a leader builds the controllers.
func (o Options) Validate() error {
	var errs []error
	if o.EnableControllers {
		errs = append(errs, o.Controllers.Validate())
	}
	if o.EnableAPI {
		errs = append(errs, o.API.Validate())
	}
	if o.EnableRedirect {
		errs = append(errs, o.Redirect.Validate())
	}
	if o.EnableRedirect || o.EnableAPI {
		a := o.Analytics
		a.Complete()
		errs = append(errs, a.Validate())
	}
	if o.EnableWebhooks {
		errs = append(errs, o.Webhooks.Validate())
	}
	if o.LeaderElect {
		if o.LeaderElectionID == "" {
			errs = append(errs, errors.New("--leader-election-id must not be empty"))
		}
		if o.LeaseDuration <= 0 || o.RenewDeadline <= 0 || o.RetryPeriod <= 0 {
			errs = append(errs, fmt.Errorf("--leader-election-lease-duration (%s), --leader-election-renew-deadline (%s) and --leader-election-retry-period (%s) must be positive",
				o.LeaseDuration, o.RenewDeadline, o.RetryPeriod))
		} else {
			if o.RenewDeadline >= o.LeaseDuration {
				errs = append(errs, fmt.Errorf("--leader-election-renew-deadline (%s) must be less than --leader-election-lease-duration (%s): "+
					"a leader must give up before a standby may take over", o.RenewDeadline, o.LeaseDuration))
			}
			// client-go retries with up to 20% jitter (leaderelection.JitterFactor).
			if float64(o.RenewDeadline) <= 1.2*float64(o.RetryPeriod) {
				errs = append(errs, fmt.Errorf("--leader-election-renew-deadline (%s) must exceed 1.2 x --leader-election-retry-period (%s)",
					o.RenewDeadline, o.RetryPeriod))
			}
		}
	}
	errs = append(errs, o.validateMetricsCert())
	if o.ShutdownDelay < 0 {
		errs = append(errs, fmt.Errorf("--shutdown-delay must not be negative, got %s", o.ShutdownDelay))
	}
	return errors.Join(errs...)
}

// validateMetricsCert checks the certificate files named by the flags:
// controller-runtime falls back to a self-signed certificate when they are
// missing, which would hide a wrong path or an unmounted Secret.
func (o Options) validateMetricsCert() error {
	if o.MetricsCertPath == "" {
		return nil
	}
	if !o.MetricsSecure {
		return errors.New("--metrics-cert-path needs --metrics-secure")
	}
	var errs []error
	for _, name := range []string{o.MetricsCertName, o.MetricsCertKey} {
		if name == "" {
			errs = append(errs, errors.New("--metrics-cert-name and --metrics-cert-key must not be empty"))
			continue
		}
		if st, err := os.Stat(filepath.Join(o.MetricsCertPath, name)); err != nil || st.IsDir() {
			errs = append(errs, fmt.Errorf("--metrics-cert-path %s: no file %s", o.MetricsCertPath, name))
		}
	}
	return errors.Join(errs...)
}
