package controllers

import (
	"context"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"

	kurzv1alpha1 "github.com/kurz-dev/kurz/api/v1alpha1"
	"github.com/kurz-dev/kurz/internal/claims"
	"github.com/kurz-dev/kurz/internal/fieldindex"
	"github.com/kurz-dev/kurz/internal/routing"
)

// IngressReconciler keeps one Ingress, in kurz's namespace, for every
// Domain that holds its hostname and is Active, so the cluster's ingress
// controller routes https://<domain>/ to the redirect Service and
// cert-manager (through the Ingress's annotations) issues its certificate.
// It also sets the Domain's TLSReady condition. Requests are Domain keys;
// the Ingress of a Domain is found by name (routing.IngressName), so an
// Ingress whose Domain is gone, even while kurz was down, is removed when
// the Ingress informer lists it on start.
type IngressReconciler struct {
	client.Client
	// Reader reads past the cache, to tell an Ingress the cache has not
	// seen yet from one that is not kurz's (which it never sees).
	Reader   client.Reader
	Recorder events.EventRecorder
	Config   routing.IngressConfig
	// Grace is how long an Ingress outlives its Domain's Active phase.
	Grace time.Duration
	// Certificates: cert-manager's Certificate kind is installed.
	Certificates bool
	// Now is the clock; tests may stop it.
	Now func() time.Time
}

// SetupWithManager registers the controller. Every Domain event counts, its
// status writes above all (Active, Ready), so there is no predicate; a pass
// that changes nothing writes nothing.
func (r *IngressReconciler) SetupWithManager(mgr ctrl.Manager, workers int) error {
	b := ctrl.NewControllerManagedBy(mgr).
		Named("ingress").
		For(&kurzv1alpha1.Domain{}).
		Watches(&networkingv1.Ingress{}, handler.EnqueueRequestsFromMapFunc(domainOfIngress)).
		Watches(&corev1.Secret{}, handler.EnqueueRequestsFromMapFunc(r.domainsOfSecret)).
		WithOptions(controller.Options{MaxConcurrentReconciles: max(workers, 1)})
	if r.Certificates {
		b = b.Watches(newCertificate(), handler.EnqueueRequestsFromMapFunc(r.domainsOfCertificate))
	}
	return b.Complete(r)
}

// The rights below are a Role in kurz's own namespace (config/ installs
// into kurz-system; the Helm chart into its release namespace), never
// cluster-wide: kurz reads Secrets of its own namespace only.

// +kubebuilder:rbac:groups=networking.k8s.io,resources=ingresses,verbs=get;list;watch;create;update;delete,namespace=kurz-system
// +kubebuilder:rbac:groups="",resources=secrets,verbs=get;list;watch,namespace=kurz-system
// +kubebuilder:rbac:groups=cert-manager.io,resources=certificates,verbs=get;list;watch,namespace=kurz-system
// +kubebuilder:rbac:groups=kurz.dev,resources=domains,verbs=get;list;watch
// +kubebuilder:rbac:groups=kurz.dev,resources=domains/status,verbs=patch
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

// Reconcile creates, updates or deletes the Domain's Ingress and sets its
// TLSReady condition.
func (r *IngressReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	var live *kurzv1alpha1.Domain
	d := &kurzv1alpha1.Domain{}
	if err := r.Get(ctx, req.NamespacedName, d); err == nil {
		if d.DeletionTimestamp == nil {
			live = d
		}
	} else if !apierrors.IsNotFound(err) {
		return ctrl.Result{}, err
	}

	existing := &networkingv1.Ingress{}
	key := types.NamespacedName{Namespace: r.Config.Namespace, Name: routing.IngressName(req.Namespace, req.Name)}
	if err := r.Get(ctx, key, existing); apierrors.IsNotFound(err) {
		existing = nil
	} else if err != nil {
		return ctrl.Result{}, fmt.Errorf("get Ingress %s: %w", key.Name, err)
	}

	holds := false
	if live != nil {
		var err error
		if holds, err = r.holdsHostname(ctx, live); err != nil {
			return ctrl.Result{}, err
		}
	}
	now := r.Now()
	decision := routing.Decide(live, holds, existing, r.Grace, now)
	routed, err := r.applyDecision(ctx, decision, live, existing)
	blocked := ""
	if apierrors.IsAlreadyExists(err) && !r.ownsIngress(ctx, key) {
		// Not kurz's (no managed-by label): say so in TLSReady and retry
		// with the work queue's backoff.
		blocked = fmt.Sprintf("Ingress %s in %s exists and is not kurz's (no %s=%s label): delete or rename it",
			key.Name, key.Namespace, routing.LabelManagedBy, routing.ManagedBy)
	}
	switch {
	case blocked != "":
	case apierrors.IsConflict(err) || apierrors.IsAlreadyExists(err):
		ctrl.LoggerFrom(ctx).V(1).Info("Ingress changed meanwhile, retrying", "ingress", key.Name)
		return ctrl.Result{RequeueAfter: conflictRetry}, nil
	case err != nil:
		return ctrl.Result{}, err
	}
	result := ctrl.Result{RequeueAfter: decision.Wait}
	if live == nil {
		return result, nil
	}
	wait, statusErr := r.setTLSStatus(ctx, live, routed, blocked, now)
	if blocked != "" {
		return ctrl.Result{}, errors.Join(err, statusErr)
	}
	err = statusErr
	if err != nil {
		if apierrors.IsConflict(err) {
			return ctrl.Result{RequeueAfter: conflictRetry}, nil
		}
		return ctrl.Result{}, err
	}
	if wait > 0 && (result.RequeueAfter == 0 || wait < result.RequeueAfter) {
		result.RequeueAfter = wait
	}
	return result, nil
}

// ownsIngress reports whether the Ingress key, read past the cache, is
// kurz's; true when it cannot tell (the next pass will).
func (r *IngressReconciler) ownsIngress(ctx context.Context, key types.NamespacedName) bool {
	ing := &networkingv1.Ingress{}
	if err := r.Reader.Get(ctx, key, ing); err != nil {
		return true
	}
	return ing.Labels[routing.LabelManagedBy] == routing.ManagedBy
}

// holdsHostname reports whether d owns its hostname among every Domain that
// claims it (internal/claims decides, as for serving).
func (r *IngressReconciler) holdsHostname(ctx context.Context, d *kurzv1alpha1.Domain) (bool, error) {
	var claimants kurzv1alpha1.DomainList
	if err := r.List(ctx, &claimants, client.MatchingFields{fieldindex.Domain: string(d.Spec.Domain)}); err != nil {
		return false, fmt.Errorf("list Domains of %s: %w", d.Spec.Domain, err)
	}
	owner := claims.DomainOwner(withSelf(claimants.Items, d))
	return owner != nil && owner.Namespace == d.Namespace && owner.Name == d.Name, nil
}

// applyDecision carries decision out and returns the Ingress that routes
// the Domain afterwards (nil: none).
func (r *IngressReconciler) applyDecision(ctx context.Context, decision routing.Decision, d *kurzv1alpha1.Domain, existing *networkingv1.Ingress) (*networkingv1.Ingress, error) {
	log := ctrl.LoggerFrom(ctx)
	switch decision.Action {
	case routing.Keep:
		log.V(1).Info("keeping Ingress through the grace period", "ingress", klog.KObj(existing), "for", decision.Wait)
		return existing, nil
	case routing.Remove:
		if existing == nil {
			return nil, nil
		}
		if err := r.Delete(ctx, existing, client.Preconditions{UID: &existing.UID}); err != nil && !apierrors.IsNotFound(err) {
			return nil, fmt.Errorf("delete Ingress %s: %w", existing.Name, err)
		}
		log.Info("deleted Ingress", "ingress", klog.KObj(existing), "host", routing.HostOf(existing))
		return nil, nil
	}
	desired := routing.DesiredIngress(r.Config, d)
	if existing == nil {
		if err := r.Create(ctx, desired); err != nil {
			return nil, fmt.Errorf("create Ingress %s: %w", desired.Name, err)
		}
		log.Info("created Ingress", "ingress", klog.KObj(desired), "host", d.Spec.Domain)
		return desired, nil
	}
	if !routing.Differs(existing, desired) {
		return existing, nil
	}
	updated := existing.DeepCopy()
	updated.Labels, updated.Annotations, updated.Spec = desired.Labels, desired.Annotations, desired.Spec
	if err := r.Update(ctx, updated); err != nil {
		return nil, fmt.Errorf("update Ingress %s: %w", existing.Name, err)
	}
	log.Info("updated Ingress", "ingress", klog.KObj(updated), "host", d.Spec.Domain)
	return updated, nil
}
