package controllers

import (
	"context"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	kurzv1alpha1 "github.com/kurz-dev/kurz/api/v1alpha1"
	"github.com/kurz-dev/kurz/internal/webhooks"
)

// The change events webhooks deliver come from the transitions the
// controllers write (docs/webhooks.md, "Where events come from"): each is
// handed to the Emitter after the status patch that records it, so a
// transition a pass could not write is seen again by the next pass, or
// the next leader. The events themselves (ids, times) derive from the
// objects' state (internal/webhooks), so a new leader that resends them
// (Emitter.Lead) sends the same ids. link.deleted comes from the
// Emitter's own informer handler (a deleted Link has no status to write).

// changes emits the change events of the controllers; its zero value (no
// Emitter) emits nothing.
type changes struct {
	emitter webhooks.Emitter
}

func (c changes) wants(namespace string, t kurzv1alpha1.WebhookEvent) bool {
	return c.emitter != nil && c.emitter.Wants(namespace, t)
}

// linkPatched emits what a Link's status patch recorded: its first
// reconcile (link.created), a new generation reconciled (link.updated),
// Ready becoming Expired or KeyConflict.
func (c changes) linkPatched(_ context.Context, orig, l *kurzv1alpha1.Link) {
	if c.emitter == nil {
		return
	}
	ns := l.Namespace
	switch before, after := orig.Status.ObservedGeneration, l.Status.ObservedGeneration; {
	case before == 0 && after != 0:
		if c.wants(ns, kurzv1alpha1.EventLinkCreated) {
			c.emitter.Emit(webhooks.Created(l.DeepCopy()))
		}
	case after > before:
		if c.wants(ns, kurzv1alpha1.EventLinkUpdated) {
			c.emitter.Emit(webhooks.Updated(l.DeepCopy()))
		}
	}
	ready := readyChanged(orig.Status.Conditions, l.Status.Conditions)
	if ready == nil {
		return
	}
	switch ready.Reason {
	case kurzv1alpha1.ReasonExpired:
		if c.wants(ns, kurzv1alpha1.EventLinkExpired) && l.Spec.ExpiresAt != nil {
			c.emitter.Emit(webhooks.Expired(l.DeepCopy()))
		}
	case kurzv1alpha1.ReasonKeyConflict:
		if c.wants(ns, kurzv1alpha1.EventLinkConflict) {
			c.emitter.Emit(webhooks.Conflict(l.DeepCopy()))
		}
	}
}

// domainPatched emits domain.verified when a Domain's phase became Active
// and domain.unverified when it went from Active back to Pending.
func (c changes) domainPatched(_ context.Context, orig, d *kurzv1alpha1.Domain) {
	if c.emitter == nil || orig.Status.Phase == d.Status.Phase {
		return
	}
	switch {
	case d.Status.Phase == kurzv1alpha1.DomainActive:
		if c.wants(d.Namespace, kurzv1alpha1.EventDomainVerified) {
			c.emitter.Emit(webhooks.Verified(d.DeepCopy()))
		}
	case orig.Status.Phase == kurzv1alpha1.DomainActive:
		if c.wants(d.Namespace, kurzv1alpha1.EventDomainUnverified) {
			c.emitter.Emit(webhooks.Unverified(d.DeepCopy()))
		}
	}
}

// tlsPatched emits domain.tls_ready when a Domain's TLSReady became True.
func (c changes) tlsPatched(orig, d *kurzv1alpha1.Domain) {
	if c.emitter == nil {
		return
	}
	n := meta.FindStatusCondition(d.Status.Conditions, kurzv1alpha1.ConditionTLSReady)
	o := meta.FindStatusCondition(orig.Status.Conditions, kurzv1alpha1.ConditionTLSReady)
	if n == nil || n.Status != metav1.ConditionTrue || (o != nil && o.Status == metav1.ConditionTrue) {
		return
	}
	if c.wants(d.Namespace, kurzv1alpha1.EventDomainTLSReady) {
		c.emitter.Emit(webhooks.TLSReady(d.DeepCopy()))
	}
}

// leading is a runnable of the controllers' term: the Emitter's Lead,
// which resends what a previous leader may have lost and sends deletes
// while the term lasts.
type leading struct{ emitter webhooks.Emitter }

func (l leading) Start(ctx context.Context) error { return l.emitter.Lead(ctx) }
