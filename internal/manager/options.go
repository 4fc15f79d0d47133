package manager

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/kurz-dev/kurz/controllers"
	"github.com/kurz-dev/kurz/internal/apiserver"
	"github.com/kurz-dev/kurz/internal/redirect"
)

// Options configure the manager and each role. Every field has a flag.
type Options struct {
	MetricsBindAddress string
	// MetricsSecure serves /metrics over HTTPS, to callers whose bearer
	// token kube-apiserver authenticates (TokenReview) and authorizes
	// (SubjectAccessReview: get on the non-resource URL /metrics).
	MetricsSecure bool
	// MetricsCertPath is the directory of the metrics server's certificate
	// (MetricsCertName, MetricsCertKey), reloaded when it changes; empty:
	// a self-signed certificate made at start.
	MetricsCertPath, MetricsCertName, MetricsCertKey string
	HealthProbeBindAddress                           string
	// PprofBindAddress serves net/http/pprof ("0": off), for heap
	// profiles of a running replica (hack/bench-scale reads them).
	PprofBindAddress string

	LeaderElect             bool
	LeaderElectionNamespace string
	LeaderElectionID        string
	// LeaseDuration is how long standbys wait after the last renewal
	// before they take the Lease over.
	LeaseDuration time.Duration
	// RenewDeadline is how long the leader keeps trying to renew before it
	// stops its controllers (it keeps serving) and campaigns again.
	RenewDeadline time.Duration
	// RetryPeriod is the wait between two attempts to take or renew it.
	RetryPeriod time.Duration

	// ShutdownDelay is how long a replica keeps serving after a signal
	// with /readyz failing, so endpoints drop it before it stops listening.
	ShutdownDelay time.Duration

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
		Controllers:       controllers.DefaultOptions(),
		API:               apiserver.DefaultOptions(),
		Redirect:          redirect.DefaultOptions(),
	}
}

// BindFlags registers every option on fs, with o's values as defaults.
func (o *Options) BindFlags(fs *flag.FlagSet) {
	fs.StringVar(&o.MetricsBindAddress, "metrics-bind-address", o.MetricsBindAddress, "Address of the Prometheus metrics endpoint (/metrics); \"0\" disables it.")
	fs.BoolVar(&o.MetricsSecure, "metrics-secure", o.MetricsSecure, "Serve /metrics over HTTPS to callers with a Kubernetes bearer token allowed to get /metrics (ClusterRole kurz-metrics-reader); false: plain HTTP to anyone who can connect.")
	fs.StringVar(&o.MetricsCertPath, "metrics-cert-path", o.MetricsCertPath, "Directory of the metrics server's certificate and key, reloaded when they change (default: a self-signed certificate made at start).")
	fs.StringVar(&o.MetricsCertName, "metrics-cert-name", o.MetricsCertName, "File name of the metrics server's certificate in --metrics-cert-path.")
	fs.StringVar(&o.MetricsCertKey, "metrics-cert-key", o.MetricsCertKey, "File name of the metrics server's private key in --metrics-cert-path.")
	fs.StringVar(&o.HealthProbeBindAddress, "health-probe-bind-address", o.HealthProbeBindAddress, "Address of the /healthz and /readyz probes; \"0\" disables them.")
	fs.StringVar(&o.PprofBindAddress, "pprof-bind-address", o.PprofBindAddress, "Address of the Go profiler (/debug/pprof/); \"0\" disables it. It shows internals: keep it on loopback.")
	fs.BoolVar(&o.LeaderElect, "leader-elect", o.LeaderElect, "Elect a leader (Lease) among replicas to run the controllers; the API and redirect servers run on every replica.")
	fs.StringVar(&o.LeaderElectionNamespace, "leader-election-namespace", o.LeaderElectionNamespace, "Namespace of the leader election Lease (default: the pod's namespace).")
	fs.StringVar(&o.LeaderElectionID, "leader-election-id", o.LeaderElectionID, "Name of the leader election Lease.")
	fs.DurationVar(&o.LeaseDuration, "leader-election-lease-duration", o.LeaseDuration, "How long standbys wait after the leader's last renewal before taking the Lease.")
	fs.DurationVar(&o.RenewDeadline, "leader-election-renew-deadline", o.RenewDeadline, "How long the leader retries renewing the Lease before it stops its controllers (it keeps serving) and campaigns again; less than the lease duration.")
	fs.DurationVar(&o.RetryPeriod, "leader-election-retry-period", o.RetryPeriod, "Wait between attempts to take or renew the Lease; well under the renew deadline.")
	fs.DurationVar(&o.ShutdownDelay, "shutdown-delay", o.ShutdownDelay, "On SIGTERM, how long to keep serving with /readyz failing (so load balancers stop sending traffic) before draining; a second signal exits at once.")
	fs.BoolVar(&o.EnableControllers, "controllers", o.EnableControllers, "Run the Link and Domain controllers.")
	fs.BoolVar(&o.EnableAPI, "api", o.EnableAPI, "Run the /api/v1 server.")
	fs.BoolVar(&o.EnableRedirect, "redirect", o.EnableRedirect, "Run the redirect server.")
	o.Controllers.BindFlags(fs)
	o.API.BindFlags(fs)
	o.Redirect.BindFlags(fs)
}

// Validate rejects options the manager cannot run with. The roles validate
// their own options.
func (o Options) Validate() error {
	var errs []error
	if o.LeaderElect {
		if o.LeaderElectionID == "" {
			errs = append(errs, errors.New("leader-election-id must not be empty"))
		}
		if o.LeaseDuration <= 0 || o.RenewDeadline <= 0 || o.RetryPeriod <= 0 {
			errs = append(errs, fmt.Errorf("leader-election-lease-duration (%s), -renew-deadline (%s) and -retry-period (%s) must be positive",
				o.LeaseDuration, o.RenewDeadline, o.RetryPeriod))
		} else {
			if o.RenewDeadline >= o.LeaseDuration {
				errs = append(errs, fmt.Errorf("leader-election-renew-deadline (%s) must be less than leader-election-lease-duration (%s): "+
					"a leader must give up before a standby may take over", o.RenewDeadline, o.LeaseDuration))
			}
			// client-go retries with up to 20% jitter (leaderelection.JitterFactor).
			if float64(o.RenewDeadline) <= 1.2*float64(o.RetryPeriod) {
				errs = append(errs, fmt.Errorf("leader-election-renew-deadline (%s) must exceed 1.2 x leader-election-retry-period (%s)",
					o.RenewDeadline, o.RetryPeriod))
			}
		}
	}
	errs = append(errs, o.validateMetricsCert())
	if o.EnableControllers {
		// Checked here too, not only when a leader builds the controllers:
		// a bad flag (two ways of routing, say) stops kurz at start.
		errs = append(errs, o.Controllers.Validate())
	}
	if o.ShutdownDelay < 0 {
		errs = append(errs, fmt.Errorf("shutdown-delay must not be negative, got %s", o.ShutdownDelay))
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
		return errors.New("metrics-cert-path needs metrics-secure")
	}
	var errs []error
	for _, name := range []string{o.MetricsCertName, o.MetricsCertKey} {
		if name == "" {
			errs = append(errs, errors.New("metrics-cert-name and metrics-cert-key must not be empty"))
			continue
		}
		if st, err := os.Stat(filepath.Join(o.MetricsCertPath, name)); err != nil || st.IsDir() {
			errs = append(errs, fmt.Errorf("metrics-cert-path %s: no file %s", o.MetricsCertPath, name))
		}
	}
	return errors.Join(errs...)
}
