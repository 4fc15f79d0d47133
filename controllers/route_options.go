package controllers

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/kurz-dev/kurz/internal/flagbind"
)

// RouteOptions are what every way of routing shares, Ingresses or the
// Gateway API: where kurz's routing objects live and how long they outlive
// their Domain's Active phase.
type RouteOptions struct {
	// Namespace is where the routing objects live and their Secrets and
	// Certificates are read: kurz's own (a namespaced Role grants it there
	// only).
	Namespace string `flag:"route-namespace" usage:"Namespace of kurz's routing objects (Ingresses, or Gateways, ListenerSets and HTTPRoutes) and their TLS Secrets (default: the pod's namespace)."`
	// GracePeriod is how long a route stays after its Domain, still
	// holding the hostname, stopped being Active: DNS records that went
	// missing for a while must not drop a live certificate.
	GracePeriod time.Duration `flag:"route-grace-period" usage:"How long a Domain's route (Ingress, or HTTPRoute and Gateway listener, and so its certificate) stays after the Domain, still holding its hostname, stopped being Active."`
}

// serviceAccountNamespace is where a pod finds its own namespace.
const serviceAccountNamespace = "/var/run/secrets/kubernetes.io/serviceaccount/namespace"

// DefaultRouteOptions returns the pod's own namespace (POD_NAMESPACE, else
// the ServiceAccount's; empty outside a pod) and an hour's grace.
func DefaultRouteOptions() RouteOptions {
	ns := os.Getenv("POD_NAMESPACE")
	if ns == "" {
		if b, err := os.ReadFile(serviceAccountNamespace); err == nil {
			ns = strings.TrimSpace(string(b))
		}
	}
	return RouteOptions{Namespace: ns, GracePeriod: time.Hour}
}

// BindFlags registers the flags on fs, with o's values as defaults, and
// their names before the Gateway API support (--ingress-namespace,
// --ingress-grace-period) as aliases, so existing installs keep working.
func (o *RouteOptions) BindFlags(fs *flag.FlagSet) {
	flagbind.Fields(fs, o)
	fs.Var(aliasOf(fs, "route-namespace"), "ingress-namespace", "Deprecated: the old name of --route-namespace.")
	fs.Var(aliasOf(fs, "route-grace-period"), "ingress-grace-period", "Deprecated: the old name of --route-grace-period.")
}

// aliasOf is a flag value that sets the flag name of fs.
func aliasOf(fs *flag.FlagSet, name string) flag.Value { return fs.Lookup(name).Value }

// validate checks o when kurz keeps routes (routing); without routes the
// options are unused.
func (o RouteOptions) validate(routing bool) error {
	if !routing {
		return nil
	}
	var errs []error
	if o.Namespace == "" {
		errs = append(errs, errors.New("--route-namespace must be set with --ingress-class, --gateway-class or --gateway when kurz does not run in a pod"))
	} else if msgs := validation.IsDNS1123Label(o.Namespace); len(msgs) > 0 {
		errs = append(errs, fmt.Errorf("--route-namespace %q: %s", o.Namespace, strings.Join(msgs, "; ")))
	}
	if o.GracePeriod < 0 {
		errs = append(errs, fmt.Errorf("--route-grace-period must not be negative, not %s", o.GracePeriod))
	}
	return errors.Join(errs...)
}
