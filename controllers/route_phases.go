package controllers

import (
	"context"
	"errors"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kurzv1alpha1 "github.com/kurz-dev/kurz/api/v1alpha1"
	"github.com/kurz-dev/kurz/internal/claims"
	"github.com/kurz-dev/kurz/internal/fieldindex"
	"github.com/kurz-dev/kurz/internal/routing"
)

// A RouteReconciler pass runs phases in order over a routeScope, the way
// Flux's and cluster-api's reconcilers do: reconcileRoute keeps the
// Domain's route, reconcileTLS writes what it serves into TLSReady.

// routeScope is what a pass reads once and its phases share.
type routeScope struct {
	// key names the route kurz keeps for the Domain, in kurz's namespace.
	key types.NamespacedName
	// domain is the Domain; nil when it is gone or being deleted.
	domain *kurzv1alpha1.Domain
	// existing is the route as read, nil when there is none.
	existing client.Object
	now      time.Time

	// Set by reconcileRoute: the route after it (nil: none), and why it
	// could not be created ("" when it could).
	routed  client.Object
	blocked string
}

// routePhase is one step of a pass. An error ends the pass; errLostRace
// ends it to run again after conflictRetry.
type routePhase func(ctx context.Context, s *routeScope) (ctrl.Result, error)

// errLostRace is a write that lost an optimistic-lock race (or a create
// that found the object made meanwhile): read again, soon.
var errLostRace = errors.New("changed meanwhile")

// runPhases runs phases in order and returns the soonest requeue any of
// them asked for, or the error that ended the pass.
func runPhases(ctx context.Context, s *routeScope, phases ...routePhase) (ctrl.Result, error) {
	var result ctrl.Result
	for _, phase := range phases {
		res, err := phase(ctx, s)
		if errors.Is(err, errLostRace) {
			ctrl.LoggerFrom(ctx).V(1).Info("route or status changed meanwhile, retrying", "route", s.key.Name, "error", err.Error())
			return ctrl.Result{RequeueAfter: conflictRetry}, nil
		}
		if err != nil {
			return ctrl.Result{}, err
		}
		result = soonest(result, res)
	}
	return result, nil
}

// soonest merges two results: the earlier of their requeues.
func soonest(a, b ctrl.Result) ctrl.Result {
	if a.RequeueAfter == 0 || (b.RequeueAfter > 0 && b.RequeueAfter < a.RequeueAfter) {
		a.RequeueAfter = b.RequeueAfter
	}
	return a
}

// scope reads the Domain of req and the route kurz keeps for it.
func (r *RouteReconciler) scope(ctx context.Context, req ctrl.Request) (*routeScope, error) {
	s := &routeScope{
		key: types.NamespacedName{Namespace: r.Namespace, Name: r.routes.name(req.Namespace, req.Name)},
		now: r.Now(),
	}
	live, err := getLive[kurzv1alpha1.Domain](ctx, r.Client, req)
	if err != nil {
		return nil, err
	}
	s.domain = live
	obj := r.routes.newObject()
	switch err := r.Get(ctx, s.key, obj); {
	case err == nil:
		s.existing = obj
	case !apierrors.IsNotFound(err):
		return nil, fmt.Errorf("get %s %s: %w", r.routes.kind(), s.key.Name, err)
	}
	return s, nil
}

// reconcileRoute creates, updates, keeps or deletes the route as
// routing.Decide says, and requeues when a grace period ends. A route of
// that name that is not kurz's blocks it: reconcileTLS says so.
func (r *RouteReconciler) reconcileRoute(ctx context.Context, s *routeScope) (ctrl.Result, error) {
	holds := false
	if s.domain != nil {
		var err error
		if holds, err = r.holdsHostname(ctx, s.domain); err != nil {
			return ctrl.Result{}, err
		}
	}
	existingHost := ""
	if s.existing != nil {
		existingHost = r.routes.host(s.existing)
	}
	decision := routing.Decide(s.domain, holds, existingHost, r.Grace, s.now)
	routed, err := r.applyDecision(ctx, decision, s.domain, s.existing)
	switch {
	case apierrors.IsAlreadyExists(err) && !r.owns(ctx, s.key):
		// Not kurz's (no managed-by label): TLSReady says so, and the
		// pass is retried with the work queue's backoff.
		s.blocked = fmt.Sprintf("%s %s in %s exists and is not kurz's (no %s=%s label): delete or rename it",
			r.routes.kind(), s.key.Name, s.key.Namespace, routing.LabelManagedBy, routing.ManagedBy)
		return ctrl.Result{}, nil
	case apierrors.IsConflict(err) || apierrors.IsAlreadyExists(err):
		return ctrl.Result{}, fmt.Errorf("%s %s: %w", r.routes.kind(), s.key.Name, errLostRace)
	case err != nil:
		return ctrl.Result{}, err
	}
	s.routed = routed
	return ctrl.Result{RequeueAfter: decision.Wait}, nil
}

// reconcileTLS writes the Domain's TLSReady condition and status.tls (see
// computeTLS) through the status path Links and Domains share: patched
// only when changed, on the resourceVersion it was computed from
// (conditions are one list, and the Domain controller writes Ready into
// it), with an event when TLSReady changes. It requeues at the
// certificate's expiry. A blocked route ends the pass with an error once
// TLSReady says why, for the work queue's backoff.
func (r *RouteReconciler) reconcileTLS(ctx context.Context, s *routeScope) (ctrl.Result, error) {
	if s.domain == nil {
		return ctrl.Result{}, nil
	}
	orig := s.domain.DeepCopy()
	wait, err := r.computeTLS(ctx, s.domain, s.routed, s.blocked, s.now)
	var retry ctrl.Result
	if err == nil {
		var patched bool
		patched, retry, err = patchChangedStatus(ctx, r.Client, orig, s.domain, true, "domain")
		if patched {
			recordTransition(r.Recorder, s.domain, conditionChanged(orig.Status.Conditions, s.domain.Status.Conditions, kurzv1alpha1.ConditionTLSReady))
			r.events.tlsPatched(orig, s.domain)
		}
	}
	switch {
	case s.blocked != "":
		return ctrl.Result{}, errors.Join(fmt.Errorf("route blocked: %s", s.blocked), err)
	case err != nil:
		return ctrl.Result{}, err
	case !retry.IsZero():
		return retry, nil
	}
	return ctrl.Result{RequeueAfter: wait}, nil
}

// holdsHostname reports whether d owns its hostname among every Domain that
// claims it (internal/claims decides, as for serving).
func (r *RouteReconciler) holdsHostname(ctx context.Context, d *kurzv1alpha1.Domain) (bool, error) {
	var claimants kurzv1alpha1.DomainList
	if err := r.List(ctx, &claimants, client.MatchingFields{fieldindex.Domain: string(d.Spec.Domain)}); err != nil {
		return false, fmt.Errorf("list Domains of %s: %w", d.Spec.Domain, err)
	}
	owner := claims.DomainOwner(withSelf(claimants.Items, d))
	return owner != nil && owner.Namespace == d.Namespace && owner.Name == d.Name, nil
}

// applyDecision carries decision out and returns the object that routes
// the Domain afterwards (nil: none).
func (r *RouteReconciler) applyDecision(ctx context.Context, decision routing.Decision, d *kurzv1alpha1.Domain, existing client.Object) (client.Object, error) {
	log := ctrl.LoggerFrom(ctx)
	kind := r.routes.kind()
	switch decision.Action {
	case routing.Keep:
		log.V(1).Info("keeping the route through the grace period", "kind", kind, "name", klog.KObj(existing), "for", decision.Wait)
		return existing, nil
	case routing.Remove:
		if existing == nil {
			return nil, nil
		}
		uid := existing.GetUID()
		if err := r.Delete(ctx, existing, client.Preconditions{UID: &uid}); err != nil && !apierrors.IsNotFound(err) {
			return nil, fmt.Errorf("delete %s %s: %w", kind, existing.GetName(), err)
		}
		log.Info("deleted route", "kind", kind, "name", klog.KObj(existing), "host", r.routes.host(existing))
		return nil, nil
	}
	desired := r.routes.desired(d, existing)
	if existing == nil {
		if err := r.Create(ctx, desired); err != nil {
			return nil, fmt.Errorf("create %s %s: %w", kind, desired.GetName(), err)
		}
		log.Info("created route", "kind", kind, "name", klog.KObj(desired), "host", d.Spec.Domain)
		return desired, nil
	}
	updated := r.routes.update(existing, desired)
	if updated == nil {
		return existing, nil
	}
	if err := r.Update(ctx, updated); err != nil {
		return nil, fmt.Errorf("update %s %s: %w", kind, existing.GetName(), err)
	}
	log.Info("updated route", "kind", kind, "name", klog.KObj(updated), "host", d.Spec.Domain)
	return updated, nil
}
