package controllers

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kurzv1alpha1 "github.com/kurz-dev/kurz/api/v1alpha1"
	"github.com/kurz-dev/kurz/internal/routing"
)

// computeTLS sets d's status.tls and TLSReady condition from its route
// (routed, nil: none; blocked says why it could not be created), where the
// route serves (an Ingress at once, an HTTPRoute once its listener exists),
// the hostname's Secret and cert-manager's Certificate for it. It returns
// when to look again: at the certificate's expiry, so TLSReady turns False
// then.
func (r *RouteReconciler) computeTLS(ctx context.Context, d *kurzv1alpha1.Domain, routed client.Object, blocked string, now time.Time) (time.Duration, error) {
	host := string(d.Spec.Domain)
	secretName := routing.SecretName(host)
	var where kurzv1alpha1.DomainTLS
	if routed != nil {
		var err error
		if where, blocked, err = r.routes.served(ctx, r.Client, routed); err != nil {
			return 0, err
		}
	}
	in := routing.TLSInput{Host: host, Route: r.routes.noun(), Routed: routed != nil && blocked == "", Blocked: blocked, Now: now}
	if in.Routed {
		secret := &corev1.Secret{}
		switch err := r.Get(ctx, types.NamespacedName{Namespace: r.Namespace, Name: secretName}, secret); {
		case err == nil:
			in.Secret = secret
		case !apierrors.IsNotFound(err):
			return 0, fmt.Errorf("get Secret %s: %w", secretName, err)
		}
		cert, err := r.certificateFor(ctx, secretName)
		if err != nil {
			return 0, err
		}
		in.Certificate = cert
	}
	st := routing.EvaluateTLS(in)

	tls := &where
	tls.SecretName = secretName
	if st.NotAfter != nil {
		t := metav1.NewTime(st.NotAfter.Truncate(time.Second))
		tls.NotAfter = &t
	}
	d.Status.TLS = tls
	meta.SetStatusCondition(&d.Status.Conditions, metav1.Condition{
		Type:               kurzv1alpha1.ConditionTLSReady,
		Status:             st.Status,
		Reason:             st.Reason,
		Message:            st.Message,
		ObservedGeneration: d.Generation,
	})
	if st.Status == metav1.ConditionTrue && st.NotAfter != nil {
		return st.NotAfter.Sub(now) + time.Second, nil
	}
	return 0, nil
}

// certificateFor is cert-manager's Certificate whose spec.secretName is
// secret, nil when there is none or cert-manager is not installed
// (TLSReady then rests on the Secret alone). ingress-shim names it after
// the Secret; one made by hand may have any name, hence the search.
func (r *RouteReconciler) certificateFor(ctx context.Context, secret string) (*routing.Certificate, error) {
	if !r.Certificates {
		return nil, nil
	}
	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(routing.CertificateGVK.GroupVersion().WithKind(routing.CertificateGVK.Kind + "List"))
	if err := r.List(ctx, list, client.InNamespace(r.Namespace)); err != nil {
		return nil, fmt.Errorf("list Certificates: %w", err)
	}
	for i := range list.Items {
		if c := routing.CertificateFrom(&list.Items[i]); c.SecretName == secret {
			return &c, nil
		}
	}
	return nil, nil
}
