package controllers

import (
	"errors"
	"flag"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/kurz-dev/kurz/internal/routing"
)

// GatewayOptions configure routing through the Gateway API: kurz's own
// Gateways of Class, or ListenerSets attached to the shared Gateway Parent.
// The namespace and the grace period are RouteOptions' (one namespace of
// kurz's routes, one grace period whichever way they go).
type GatewayOptions struct {
	// Class is the GatewayClass of the Gateways kurz owns; empty: none.
	Class string
	// Parent is the platform team's Gateway kurz attaches ListenerSets to;
	// zero: none.
	Parent types.NamespacedName
	// Backend is the redirect Service: an HTTPRoute names its port by
	// number.
	Backend routing.Backend
	// Annotations go on every Gateway or ListenerSet.
	Annotations map[string]string
}

// Enabled reports whether kurz routes through the Gateway API.
func (o GatewayOptions) Enabled() bool { return o.Class != "" || o.Parent.Name != "" }

// defaultGatewayOptions: the redirect Service of config/ (port 80 is its
// "http" port).
func DefaultGatewayOptions() GatewayOptions {
	return GatewayOptions{Backend: routing.Backend{Service: "kurz-redirect", PortNumber: 80}}
}

func (o *GatewayOptions) BindFlags(fs *flag.FlagSet) {
	fs.StringVar(&o.Class, "gateway-class", o.Class, "GatewayClass of the Gateways kurz keeps for verified Domains (an HTTP listener and one HTTPS listener per hostname, 63 hostnames a Gateway, and an HTTPRoute per Domain); empty: none. Not with --ingress-class or --gateway.")
	fs.Func("gateway", "NAMESPACE/NAME of a shared Gateway to attach kurz's ListenerSets to (one HTTPS listener per verified hostname, 64 a ListenerSet, and an HTTPRoute per Domain), instead of owning Gateways.", func(s string) error {
		ns, name, ok := strings.Cut(s, "/")
		if !ok || validation.IsDNS1123Label(ns) != nil || validation.IsDNS1123Subdomain(name) != nil {
			return fmt.Errorf("--gateway %q: want NAMESPACE/NAME", s)
		}
		o.Parent = types.NamespacedName{Namespace: ns, Name: name}
		return nil
	})
	fs.Func("gateway-backend", fmt.Sprintf("Redirect Service the HTTPRoutes send to, SERVICE:PORT, PORT the Service's port number (default %q).", o.Backend.String()), func(s string) error {
		b, err := routing.ParseBackend(s)
		if err == nil && b.PortName != "" {
			err = fmt.Errorf("--gateway-backend %q: an HTTPRoute needs the Service's port number, not a name", s)
		}
		if err == nil {
			o.Backend = b
		}
		return err
	})
	fs.Func("gateway-annotation", "KEY=VALUE annotation of every Gateway or ListenerSet kurz keeps, e.g. cert-manager.io/cluster-issuer=letsencrypt. Repeatable.", addAnnotation(&o.Annotations))
}

// validate checks o against the Ingress options: one way of routing at a
// time.
func (o GatewayOptions) validate(ingress IngressOptions) error {
	if !o.Enabled() {
		return nil
	}
	var errs []error
	switch {
	case ingress.Class != "":
		errs = append(errs, errors.New("--ingress-class and --gateway-class/--gateway are exclusive: kurz routes through Ingresses or through the Gateway API, not both"))
	case o.Class != "" && o.Parent.Name != "":
		errs = append(errs, errors.New("--gateway-class and --gateway are exclusive: kurz owns Gateways of a class, or attaches ListenerSets to a shared Gateway"))
	}
	if o.Class != "" {
		if msgs := validation.IsDNS1123Subdomain(o.Class); len(msgs) > 0 {
			errs = append(errs, fmt.Errorf("--gateway-class %q: %s", o.Class, strings.Join(msgs, "; ")))
		}
	}
	if o.Backend.Service == "" || o.Backend.PortNumber == 0 {
		errs = append(errs, errors.New("--gateway-backend must name a Service and its port number"))
	}
	return errors.Join(errs...)
}

// config is the routing package's view of the options.
func (o GatewayOptions) config(namespace string) routing.GatewayConfig {
	return routing.GatewayConfig{Class: o.Class, Parent: o.Parent, Namespace: namespace, Backend: o.Backend, Annotations: o.Annotations}
}
