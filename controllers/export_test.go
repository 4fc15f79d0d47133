package controllers

import (
	"context"

	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// LinksOfDomain exposes the Link controller's Domain mapping to tests.
func (r *LinkReconciler) LinksOfDomain(ctx context.Context, o client.Object) []reconcile.Request {
	return r.linksOfDomain(ctx, o)
}

// CertificateOnly exposes the Secret cache transform to tests.
var CertificateOnly = certificateOnly

// CheckSettled exposes the start check's pass over a synced cache.
func (r *LinkReconciler) CheckSettled(ctx context.Context, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
	r.checkSettled(ctx, q)
}

// SettledAtStart exposes the Link watch's filter of its first list.
var SettledAtStart = settledAtStart

// SetPacedBound sets the bound of the Link queue for the managers set up
// until the returned function restores it.
func SetPacedBound(n int) (restore func()) {
	old := pacedBound
	pacedBound = n
	return func() { pacedBound = old }
}

// LinksWaiting is kurz_link_reconciles_waiting.
var LinksWaiting = linksWaiting
