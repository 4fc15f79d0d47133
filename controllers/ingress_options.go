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
	"github.com/kurz-dev/kurz/internal/routing"
)

// IngressOptions configure the Ingress controller, which keeps one Ingress
// per verified Domain. It runs only with Class set.
type IngressOptions struct {
	// Class is the IngressClass of kurz's Ingresses; empty turns the
	// controller off (nothing is created, nothing is cleaned up).
	Class string `flag:"ingress-class" usage:"IngressClass of the Ingress kurz keeps for every verified Domain (one rule to the redirect Service, a tls entry for the hostname); empty: no Ingresses."`
	// Namespace is where the Ingresses live and their Secrets are read:
	// kurz's own (a namespaced Role grants it there only).
	Namespace string `flag:"ingress-namespace" usage:"Namespace of kurz's Ingresses and their TLS Secrets (default: the pod's namespace)."`
	// Backend is the redirect Service the Ingresses route to.
	Backend routing.Backend
	// Annotations go on every Ingress.
	Annotations map[string]string
	// GracePeriod is how long an Ingress stays after its Domain, still
	// holding the hostname, stopped being Active: DNS records that went
	// missing for a while must not drop a live certificate.
	GracePeriod time.Duration `flag:"ingress-grace-period" usage:"How long a Domain's Ingress (and so its certificate) stays after the Domain, still holding its hostname, stopped being Active."`
}

// serviceAccountNamespace is where a pod finds its own namespace.
const serviceAccountNamespace = "/var/run/secrets/kubernetes.io/serviceaccount/namespace"

// DefaultIngressOptions returns the defaults: no class (no Ingresses), the
// redirect Service of config/, the pod's own namespace (POD_NAMESPACE, else
// the ServiceAccount's; empty outside a pod).
func DefaultIngressOptions() IngressOptions {
	ns := os.Getenv("POD_NAMESPACE")
	if ns == "" {
		if b, err := os.ReadFile(serviceAccountNamespace); err == nil {
			ns = strings.TrimSpace(string(b))
		}
	}
	return IngressOptions{
		Namespace:   ns,
		Backend:     routing.Backend{Service: "kurz-redirect", PortName: "http"},
		GracePeriod: time.Hour,
	}
}

// BindFlags registers the Ingress controller's flags on fs, with o's values
// as defaults.
func (o *IngressOptions) BindFlags(fs *flag.FlagSet) {
	flagbind.Fields(fs, o)
	fs.Func("ingress-backend", fmt.Sprintf("Redirect Service the Ingresses route to, SERVICE:PORT (port name or number) (default %q).", o.Backend.String()), func(s string) error {
		b, err := routing.ParseBackend(s)
		if err == nil {
			o.Backend = b
		}
		return err
	})
	fs.Func("ingress-annotation", "KEY=VALUE annotation of every Ingress, e.g. cert-manager.io/cluster-issuer=letsencrypt. Repeatable.", addAnnotation(&o.Annotations))
}

// addAnnotation is a repeatable KEY=VALUE flag adding to *m.
func addAnnotation(m *map[string]string) func(string) error {
	return func(s string) error {
		k, v, err := routing.ParseAnnotation(s)
		if err != nil {
			return err
		}
		if *m == nil {
			*m = map[string]string{}
		}
		(*m)[k] = v
		return nil
	}
}

// Validate rejects options the Ingress controller cannot run with; every
// message names the flag. Without a class nothing is checked: the
// controller does not run.
func (o IngressOptions) Validate() error {
	if o.Class == "" {
		return nil
	}
	var errs []error
	if msgs := validation.IsDNS1123Subdomain(o.Class); len(msgs) > 0 {
		errs = append(errs, fmt.Errorf("--ingress-class %q: %s", o.Class, strings.Join(msgs, "; ")))
	}
	if o.Namespace == "" {
		errs = append(errs, errors.New("--ingress-namespace must be set with --ingress-class when kurz does not run in a pod"))
	} else if msgs := validation.IsDNS1123Label(o.Namespace); len(msgs) > 0 {
		errs = append(errs, fmt.Errorf("--ingress-namespace %q: %s", o.Namespace, strings.Join(msgs, "; ")))
	}
	if o.Backend.Service == "" {
		errs = append(errs, errors.New("--ingress-backend must name a Service"))
	}
	if o.GracePeriod < 0 {
		errs = append(errs, fmt.Errorf("--ingress-grace-period must not be negative, got %s", o.GracePeriod))
	}
	return errors.Join(errs...)
}

// config is the routing package's view of the options.
func (o IngressOptions) config() routing.IngressConfig {
	return routing.IngressConfig{Class: o.Class, Namespace: o.Namespace, Backend: o.Backend, Annotations: o.Annotations}
}
