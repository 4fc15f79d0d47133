package routing

import (
	"maps"
	"strconv"

	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	kurzv1alpha1 "github.com/kurz-dev/kurz/api/v1alpha1"
)

// MaxListeners is the Gateway API's limit of listeners in one Gateway or
// ListenerSet (spec.listeners maxItems).
const MaxListeners = 64

// HTTPListenerName is the plain-HTTP listener of every Gateway kurz owns.
const HTTPListenerName = "http"

// GatewayConfig is how kurz's Gateway API objects look, from the
// --gateway-* flags.
type GatewayConfig struct {
	// Class is the GatewayClass of kurz's own Gateways; empty when Parent
	// is set.
	Class string
	// Parent is the platform team's shared Gateway that kurz's
	// ListenerSets attach to; zero when kurz owns its Gateways.
	Parent types.NamespacedName
	// Namespace is where kurz's Gateways or ListenerSets, HTTPRoutes and
	// Secrets live.
	Namespace string
	// Backend is the redirect Service; an HTTPRoute needs its port number.
	Backend Backend
	// Annotations go on every Gateway or ListenerSet (cert-manager reads
	// cert-manager.io/cluster-issuer from them).
	Annotations map[string]string
}

// ListenerSets reports whether kurz attaches ListenerSets to a shared
// Gateway rather than owning Gateways.
func (c GatewayConfig) ListenerSets() bool { return c.Parent.Name != "" }

// ParentKind is the kind of the objects holding kurz's listeners.
func (c GatewayConfig) ParentKind() string {
	if c.ListenerSets() {
		return "ListenerSet"
	}
	return "Gateway"
}

// Capacity is how many hostnames one of kurz's Gateways (one listener is
// the HTTP one) or ListenerSets holds.
func (c GatewayConfig) Capacity() int {
	if c.ListenerSets() {
		return MaxListeners
	}
	return MaxListeners - 1
}

// ParentName is the name of kurz's i-th Gateway or ListenerSet.
func ParentName(i int) string { return "kurz-" + strconv.Itoa(i) }

// ListenerName is the name of host's HTTPS listener: a SectionName, which
// allows what a hostname holds.
func ListenerName(host string) string { return boundedName("https-", host) }

// RouteName is the HTTPRoute of the Domain namespace/name, named like its
// Ingress would be.
func RouteName(namespace, name string) string { return IngressName(namespace, name) }

// domainMeta is the labels and annotations of every object kurz keeps for
// a Domain: managed-by, the Domain's namespace, name and uid.
func domainMeta(d *kurzv1alpha1.Domain, extra map[string]string) (labels, annotations map[string]string) {
	labels = map[string]string{
		LabelManagedBy:       ManagedBy,
		LabelDomainNamespace: d.Namespace,
		LabelDomainUID:       string(d.UID),
	}
	if validLabelValue(d.Name) {
		labels[LabelDomainName] = d.Name
	}
	annotations = maps.Clone(extra)
	if annotations == nil {
		annotations = map[string]string{}
	}
	annotations[AnnotationDomain] = d.Namespace + "/" + d.Name
	return labels, annotations
}

// DesiredHTTPRoute is the HTTPRoute sending d's hostname to the redirect
// Service. parent is the Gateway or ListenerSet its listener is in (""
// while none is assigned: the route then has no parentRefs, and
// GatewayReconciler gives it one through Assign).
func DesiredHTTPRoute(c GatewayConfig, d *kurzv1alpha1.Domain, parent string) *gatewayv1.HTTPRoute {
	host := string(d.Spec.Domain)
	labels, annotations := domainMeta(d, nil)
	route := &gatewayv1.HTTPRoute{
		ObjectMeta: metav1.ObjectMeta{
			Namespace:   c.Namespace,
			Name:        RouteName(d.Namespace, d.Name),
			Labels:      labels,
			Annotations: annotations,
		},
		Spec: gatewayv1.HTTPRouteSpec{
			Hostnames: []gatewayv1.Hostname{gatewayv1.Hostname(host)},
			Rules: []gatewayv1.HTTPRouteRule{{
				Matches: []gatewayv1.HTTPRouteMatch{{Path: &gatewayv1.HTTPPathMatch{
					Type: ptr.To(gatewayv1.PathMatchPathPrefix), Value: ptr.To("/"),
				}}},
				BackendRefs: []gatewayv1.HTTPBackendRef{{BackendRef: gatewayv1.BackendRef{
					BackendObjectReference: gatewayv1.BackendObjectReference{
						Group: ptr.To(gatewayv1.Group("")),
						Kind:  ptr.To(gatewayv1.Kind("Service")),
						Name:  gatewayv1.ObjectName(c.Backend.Service),
						Port:  ptr.To(c.Backend.PortNumber),
					},
					Weight: ptr.To(int32(1)),
				}}},
			}},
		},
	}
	route.Spec.ParentRefs = ParentRefs(c, parent, host)
	return route
}

// ParentRefs attach a route for host to its listeners in parent (none
// when parent is ""): on kurz's own Gateways the HTTP listener too, so
// http:// links redirect as well (a shared Gateway's HTTP listener is the
// platform team's), and last the hostname's HTTPS listener.
func ParentRefs(c GatewayConfig, parent, host string) []gatewayv1.ParentReference {
	if parent == "" {
		return nil
	}
	ref := func(section string) gatewayv1.ParentReference {
		return gatewayv1.ParentReference{
			Group:       ptr.To(gatewayv1.Group(gatewayv1.GroupName)),
			Kind:        ptr.To(gatewayv1.Kind(c.ParentKind())),
			Name:        gatewayv1.ObjectName(parent),
			SectionName: ptr.To(gatewayv1.SectionName(section)),
		}
	}
	var refs []gatewayv1.ParentReference
	if !c.ListenerSets() {
		refs = append(refs, ref(HTTPListenerName))
	}
	return append(refs, ref(ListenerName(host)))
}

// RouteHost is the hostname an HTTPRoute of kurz routes ("" when none).
func RouteHost(r *gatewayv1.HTTPRoute) string {
	if len(r.Spec.Hostnames) == 0 {
		return ""
	}
	return string(r.Spec.Hostnames[0])
}

// RouteParent is the Gateway or ListenerSet an HTTPRoute of kurz is
// assigned to ("" when none): the parentRef of its HTTPS listener, the last.
func RouteParent(r *gatewayv1.HTTPRoute) string {
	if len(r.Spec.ParentRefs) == 0 {
		return ""
	}
	return string(r.Spec.ParentRefs[len(r.Spec.ParentRefs)-1].Name)
}

// parentMeta is the metadata of one of kurz's Gateways or ListenerSets:
// managed-by only (it holds many Domains' listeners) and the configured
// annotations.
func parentMeta(c GatewayConfig, name string) metav1.ObjectMeta {
	annotations := maps.Clone(c.Annotations)
	if annotations == nil {
		annotations = map[string]string{}
	}
	return metav1.ObjectMeta{
		Namespace:   c.Namespace,
		Name:        name,
		Labels:      map[string]string{LabelManagedBy: ManagedBy},
		Annotations: annotations,
	}
}

// httpsListener is host's listener: HTTPS on 443, the TLS terminated with
// the certificate in SecretName(host), the Secret the Ingress path uses
// too; routes of kurz's namespace only.
func httpsListener(host string) gatewayv1.Listener {
	return gatewayv1.Listener{
		Name:     gatewayv1.SectionName(ListenerName(host)),
		Hostname: ptr.To(gatewayv1.Hostname(host)),
		Port:     443,
		Protocol: gatewayv1.HTTPSProtocolType,
		TLS: &gatewayv1.ListenerTLSConfig{
			Mode: ptr.To(gatewayv1.TLSModeTerminate),
			CertificateRefs: []gatewayv1.SecretObjectReference{{
				Group: ptr.To(gatewayv1.Group("")),
				Kind:  ptr.To(gatewayv1.Kind("Secret")),
				Name:  gatewayv1.ObjectName(SecretName(host)),
			}},
		},
		AllowedRoutes: sameNamespace(),
	}
}

func sameNamespace() *gatewayv1.AllowedRoutes {
	return &gatewayv1.AllowedRoutes{Namespaces: &gatewayv1.RouteNamespaces{From: ptr.To(gatewayv1.NamespacesFromSame)}}
}

// DesiredGateway is kurz's Gateway name holding the HTTP listener and one
// HTTPS listener per host (in the order given).
func DesiredGateway(c GatewayConfig, name string, hosts []string) *gatewayv1.Gateway {
	listeners := make([]gatewayv1.Listener, 0, 1+len(hosts))
	listeners = append(listeners, gatewayv1.Listener{
		Name:          HTTPListenerName,
		Port:          80,
		Protocol:      gatewayv1.HTTPProtocolType,
		AllowedRoutes: sameNamespace(),
	})
	for _, h := range hosts {
		listeners = append(listeners, httpsListener(h))
	}
	return &gatewayv1.Gateway{
		ObjectMeta: parentMeta(c, name),
		Spec: gatewayv1.GatewaySpec{
			GatewayClassName: gatewayv1.ObjectName(c.Class),
			Listeners:        listeners,
		},
	}
}

// DesiredListenerSet is kurz's ListenerSet name, attached to the shared
// Gateway, holding one HTTPS listener per host.
func DesiredListenerSet(c GatewayConfig, name string, hosts []string) *gatewayv1.ListenerSet {
	entries := make([]gatewayv1.ListenerEntry, 0, len(hosts))
	for _, h := range hosts {
		entries = append(entries, gatewayv1.ListenerEntry(httpsListener(h)))
	}
	return &gatewayv1.ListenerSet{
		ObjectMeta: parentMeta(c, name),
		Spec: gatewayv1.ListenerSetSpec{
			ParentRef: gatewayv1.ParentGatewayReference{
				Group:     ptr.To(gatewayv1.Group(gatewayv1.GroupName)),
				Kind:      ptr.To(gatewayv1.Kind("Gateway")),
				Name:      gatewayv1.ObjectName(c.Parent.Name),
				Namespace: ptr.To(gatewayv1.Namespace(c.Parent.Namespace)),
			},
			Listeners: entries,
		},
	}
}

// Differs reports whether an object kurz owns (an Ingress, HTTPRoute,
// Gateway or ListenerSet) lacks the labels, annotations or spec of desired
// (spec compared as given: both of the same type). kurz owns these, so
// anything else in them is replaced.
func Differs(existing, desired metav1.Object, existingSpec, desiredSpec any) bool {
	return !apiequality.Semantic.DeepEqual(existing.GetLabels(), desired.GetLabels()) ||
		!apiequality.Semantic.DeepEqual(existing.GetAnnotations(), desired.GetAnnotations()) ||
		!apiequality.Semantic.DeepEqual(existingSpec, desiredSpec)
}

// Listeners maps the listener names of one of kurz's Gateways or
// ListenerSets to their hostnames (HTTP's is "").
func Listeners(parent any) map[string]string {
	out := map[string]string{}
	host := func(h *gatewayv1.Hostname) string {
		if h == nil {
			return ""
		}
		return string(*h)
	}
	switch p := parent.(type) {
	case *gatewayv1.Gateway:
		for _, l := range p.Spec.Listeners {
			out[string(l.Name)] = host(l.Hostname)
		}
	case *gatewayv1.ListenerSet:
		for _, l := range p.Spec.Listeners {
			out[string(l.Name)] = host(l.Hostname)
		}
	}
	return out
}
