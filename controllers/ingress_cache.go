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

	"github.com/kurz-dev/kurz/internal/routing"
)

// CacheByObject returns the cache settings the Ingress controller needs, to
// put in the manager's cache.Options.ByObject before the manager is built
// (nil when Ingress.Class is empty). kurz may read Ingresses, Secrets and
// Certificates only in its own namespace, so their informers must list
// there alone; Ingresses are further limited to kurz's own.
//
// It also looks up cert-manager's Certificate CRD through mapper and records
// the answer in o: without the CRD, Certificates are neither cached nor
// watched (TLSReady then reads the Secret alone). Installing cert-manager
// later takes a restart of kurz to be noticed.
func (o *Options) CacheByObject(mapper meta.RESTMapper) (map[client.Object]cache.ByObject, error) {
	o.certificates = false
	if o.Ingress.Class == "" {
		return nil, nil
	}
	ns := map[string]cache.Config{o.Ingress.Namespace: {}}
	by := map[client.Object]cache.ByObject{
		&networkingv1.Ingress{}: {
			Namespaces: ns,
			Label:      labels.SelectorFromSet(labels.Set{routing.LabelManagedBy: routing.ManagedBy}),
		},
		&corev1.Secret{}: {Namespaces: ns, Transform: certificateOnly},
	}
	gvk := routing.CertificateGVK
	switch _, err := mapper.RESTMapping(gvk.GroupKind(), gvk.Version); {
	case err == nil:
		o.certificates = true
		by[newCertificate()] = cache.ByObject{Namespaces: ns, Transform: cache.TransformStripManagedFields()}
	case meta.IsNoMatchError(err):
	default:
		return nil, fmt.Errorf("look up cert-manager's Certificate kind: %w", err)
	}
	return by, nil
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
