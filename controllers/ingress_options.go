package controllers

import (
	"errors"
	"flag"
	"fmt"
	"strings"

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
	// Backend is the redirect Service the Ingresses route to.
	Backend routing.Backend
	// Annotations go on every Ingress.
	Annotations map[string]string
}

// DefaultIngressOptions returns the defaults: no class (no Ingresses) and
// the redirect Service of config/.
func DefaultIngressOptions() IngressOptions {
	return IngressOptions{Backend: routing.Backend{Service: "kurz-redirect", PortName: "http"}}
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
	if o.Backend.Service == "" {
		errs = append(errs, errors.New("--ingress-backend must name a Service"))
	}
	return errors.Join(errs...)
}

// config is the routing package's view of the options.
func (o IngressOptions) config(namespace string) routing.IngressConfig {
	return routing.IngressConfig{Class: o.Class, Namespace: namespace, Backend: o.Backend, Annotations: o.Annotations}
}
