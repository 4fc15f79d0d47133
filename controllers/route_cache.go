package controllers

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/kurz-dev/kurz/internal/routing"
	kurzscheme "github.com/kurz-dev/kurz/internal/scheme"
)

// CacheByObject returns the cache settings the route controllers need, to
// put in the manager's cache.Options.ByObject before the manager is built
// (nil when kurz keeps no routes). kurz may read Ingresses (or HTTPRoutes
// and Gateways or ListenerSets), Secrets and Certificates only in its own
// namespace, so their informers must list there alone; the routes and
// Gateways are further limited to kurz's own.
//
// In Gateway API mode the Gateway API's CRDs must be installed: without
// them it returns an error that says so.
//
// It also looks up cert-manager's Certificate CRD through mapper and says
// whether it is there (certManager): without the CRD, Certificates are
// neither cached nor watched, and the caller sets Options.CertManager from
// this answer so the controllers agree with the cache (TLSReady then reads
// the Secret alone). Installing cert-manager later takes a restart of kurz
// to be noticed.
func (o Options) CacheByObject(mapper meta.RESTMapper) (byObject map[client.Object]cache.ByObject, certManager bool, err error) {
	if !o.Routing() {
		return nil, false, nil
	}
	ns := map[string]cache.Config{o.Routes.Namespace: {}}
	kurzs := cache.ByObject{Namespaces: ns, Label: labels.SelectorFromSet(labels.Set{routing.LabelManagedBy: routing.ManagedBy})}
	by := map[client.Object]cache.ByObject{
		&corev1.Secret{}: {Namespaces: ns, Transform: certificateOnly},
	}
	if o.Ingress.Class != "" {
		by[&networkingv1.Ingress{}] = kurzs
	} else {
		parent := newParent(o.Gateway.config(o.Routes.Namespace))
		for _, obj := range []client.Object{&gatewayv1.HTTPRoute{}, parent} {
			gvk, err := apiutil.GVKForObject(obj, kurzscheme.Scheme)
			if err != nil {
				return nil, false, err
			}
			if _, err := mapper.RESTMapping(gvk.GroupKind(), gvk.Version); err != nil {
				return nil, false, fmt.Errorf("gateway-class/gateway need the Gateway API's %s (%s, standard channel v1.6 or later) in the cluster: %w", gvk.Kind, gvk.GroupVersion(), err)
			}
			by[obj] = kurzs
		}
	}
	gvk := routing.CertificateGVK
	switch _, err := mapper.RESTMapping(gvk.GroupKind(), gvk.Version); {
	case err == nil:
		certManager = true
		by[newCertificate()] = cache.ByObject{Namespaces: ns, Transform: cache.TransformStripManagedFields()}
	case meta.IsNoMatchError(err):
	default:
		return nil, false, fmt.Errorf("look up cert-manager's Certificate kind: %w", err)
	}
	return by, certManager, nil
}

// certificateOnly keeps of a cached Secret its metadata and tls.crt: the
// private keys of kurz's namespace never sit in kurz's memory, and the
// cache holds little more than the certificates TLSReady reads.
func certificateOnly(obj any) (any, error) {
	s, ok := obj.(*corev1.Secret)
	if !ok {
		return obj, nil
	}
	s.ManagedFields = nil
	crt, has := s.Data[corev1.TLSCertKey]
	s.Data, s.StringData = nil, nil
	if has {
		s.Data = map[string][]byte{corev1.TLSCertKey: crt}
	}
	return s, nil
}

// newCertificate is an empty cert-manager Certificate.
func newCertificate() *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(routing.CertificateGVK)
	return u
}
