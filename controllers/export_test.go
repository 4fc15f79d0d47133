package controllers

import (
	"context"

	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// LinksOfDomain exposes the Link controller's Domain mapping to tests.
func (r *LinkReconciler) LinksOfDomain(ctx context.Context, o client.Object) []reconcile.Request {
	return r.linksOfDomain(ctx, o)
}

// CertificateOnly exposes the Secret cache transform to tests.
var CertificateOnly = certificateOnly
