package routing

import (
	"fmt"
	"strconv"
	"strings"

	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation"

	kurzv1alpha1 "github.com/kurz-dev/kurz/api/v1alpha1"
)

// Labels and annotations kurz puts on the Ingresses it keeps.
const (
	// LabelManagedBy (value ManagedBy) marks kurz's Ingresses: the
	// controller's cache holds only these, and orphans are found by it.
	LabelManagedBy = "app.kubernetes.io/managed-by"
	ManagedBy      = "kurz"
	// LabelDomainNamespace, LabelDomainName and LabelDomainUID name the
	// Domain an Ingress routes for (kubectl get ingress -l ...). A Domain
	// name longer than a label value (63) gets no name label: the
	// AnnotationDomain annotation always names it.
	LabelDomainNamespace = "kurz.dev/domain-namespace"
	LabelDomainName      = "kurz.dev/domain-name"
	LabelDomainUID       = "kurz.dev/domain-uid"
	// AnnotationDomain is "namespace/name" of the Domain.
	AnnotationDomain = "kurz.dev/domain"
)

// Backend is the Service (and its port) the Ingresses route to.
type Backend struct {
	Service string
	// PortName is set for a named port, else PortNumber.
	PortName   string
	PortNumber int32
}

// String is the SERVICE:PORT form ParseBackend reads.
func (b Backend) String() string {
	if b.PortName != "" {
		return b.Service + ":" + b.PortName
	}
	return b.Service + ":" + strconv.Itoa(int(b.PortNumber))
}

// ParseBackend reads SERVICE:PORT, PORT a port name or number.
func ParseBackend(s string) (Backend, error) {
	svc, port, ok := strings.Cut(s, ":")
	if !ok || svc == "" || port == "" {
		return Backend{}, fmt.Errorf("ingress backend %q: want SERVICE:PORT (a port name or number)", s)
	}
	if errs := validation.IsDNS1035Label(svc); len(errs) > 0 {
		return Backend{}, fmt.Errorf("ingress backend %q: service name: %s", s, strings.Join(errs, "; "))
	}
	if n, err := strconv.ParseInt(port, 10, 32); err == nil {
		if n < 1 || n > 65535 {
			return Backend{}, fmt.Errorf("ingress backend %q: port must be 1-65535", s)
		}
		return Backend{Service: svc, PortNumber: int32(n)}, nil
	}
	if errs := validation.IsValidPortName(port); len(errs) > 0 {
		return Backend{}, fmt.Errorf("ingress backend %q: port name: %s", s, strings.Join(errs, "; "))
	}
	return Backend{Service: svc, PortName: port}, nil
}

// ParseAnnotation reads KEY=VALUE, KEY a valid annotation key.
func ParseAnnotation(s string) (key, value string, err error) {
	key, value, ok := strings.Cut(s, "=")
	if !ok {
		return "", "", fmt.Errorf("ingress annotation %q: want KEY=VALUE", s)
	}
	if errs := validation.IsQualifiedName(key); len(errs) > 0 {
		return "", "", fmt.Errorf("ingress annotation %q: key: %s", s, strings.Join(errs, "; "))
	}
	if strings.HasPrefix(key, "kurz.dev/") {
		return "", "", fmt.Errorf("ingress annotation %q: kurz.dev/ keys are kurz's own", s)
	}
	return key, value, nil
}

// IngressConfig is how kurz's Ingresses look, from the --ingress-* flags.
type IngressConfig struct {
	// Class is spec.ingressClassName.
	Class string
	// Namespace is where the Ingresses (and the Secrets) live: kurz's own.
	Namespace string
	// Backend is the redirect Service.
	Backend Backend
	// Annotations go on every Ingress (e.g. cert-manager.io/cluster-issuer).
	Annotations map[string]string
}

// DesiredIngress is the Ingress that routes d's hostname to the redirect
// Service over HTTPS, with the Secret SecretName for its certificate.
func DesiredIngress(c IngressConfig, d *kurzv1alpha1.Domain) *networkingv1.Ingress {
	host := string(d.Spec.Domain)
	labels, annotations := domainMeta(d, c.Annotations)

	port := networkingv1.ServiceBackendPort{Name: c.Backend.PortName, Number: c.Backend.PortNumber}
	prefix := networkingv1.PathTypePrefix
	return &networkingv1.Ingress{
		ObjectMeta: metav1.ObjectMeta{
			Namespace:   c.Namespace,
			Name:        IngressName(d.Namespace, d.Name),
			Labels:      labels,
			Annotations: annotations,
		},
		Spec: networkingv1.IngressSpec{
			IngressClassName: &c.Class,
			TLS:              []networkingv1.IngressTLS{{Hosts: []string{host}, SecretName: SecretName(host)}},
			Rules: []networkingv1.IngressRule{{
				Host: host,
				IngressRuleValue: networkingv1.IngressRuleValue{HTTP: &networkingv1.HTTPIngressRuleValue{
					Paths: []networkingv1.HTTPIngressPath{{
						Path:     "/",
						PathType: &prefix,
						Backend: networkingv1.IngressBackend{Service: &networkingv1.IngressServiceBackend{
							Name: c.Backend.Service,
							Port: port,
						}},
					}},
				}},
			}},
		},
	}
}

// validLabelValue reports whether s fits a label value.
func validLabelValue(s string) bool { return len(validation.IsValidLabelValue(s)) == 0 }

// DomainOf is the Domain an Ingress (or HTTPRoute) of kurz routes for, from its
// annotation; false for an Ingress that is not kurz's.
func DomainOf(ing metav1.Object) (types.NamespacedName, bool) {
	if ing.GetLabels()[LabelManagedBy] != ManagedBy {
		return types.NamespacedName{}, false
	}
	ns, name, ok := strings.Cut(ing.GetAnnotations()[AnnotationDomain], "/")
	if !ok || ns == "" || name == "" {
		return types.NamespacedName{}, false
	}
	return types.NamespacedName{Namespace: ns, Name: name}, true
}

// HostOf is the hostname an Ingress of kurz routes ("" when it has no rule).
func HostOf(ing *networkingv1.Ingress) string {
	if len(ing.Spec.Rules) == 0 {
		return ""
	}
	return ing.Spec.Rules[0].Host
}

// SecretsOf are the Secrets named in an Ingress's tls entries.
func SecretsOf(ing *networkingv1.Ingress) []string {
	out := make([]string, 0, len(ing.Spec.TLS))
	for _, t := range ing.Spec.TLS {
		out = append(out, t.SecretName)
	}
	return out
}
