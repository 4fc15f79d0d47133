package controllers

import (
	"context"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"k8s.io/client-go/util/workqueue"

	kurzv1alpha1 "github.com/kurz-dev/kurz/api/v1alpha1"
	"github.com/kurz-dev/kurz/internal/webhooks"
)

// The change events webhooks deliver come from the transitions the
// controllers write (docs/webhooks.md, "Where events come from"): each is
// handed to the Emitter after the status patch that records it, so a
// transition a pass could not write is seen again by the next pass, or
// the next leader. Their ids are built from what any leader would see
// (uid, generation, the resourceVersion the transition was computed from),
// so a resend carries the same id.

// changes emits the change events of the controllers; its zero value (no
// Emitter) emits nothing.
type changes struct {
	emitter webhooks.Emitter
	now     func() time.Time
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
			when := l.CreationTimestamp.Time
			if t := l.Status.CreatedAt; t != nil {
				when = t.Time
			}
			c.emitter.Emit(webhooks.LinkChange(kurzv1alpha1.EventLinkCreated, l.DeepCopy(), "", when))
		}
	case after > before:
		if c.wants(ns, kurzv1alpha1.EventLinkUpdated) {
			when := c.now()
			if t := l.Status.UpdatedAt; t != nil {
				when = t.Time
			}
			c.emitter.Emit(webhooks.LinkChange(kurzv1alpha1.EventLinkUpdated, l.DeepCopy(), webhooks.Generation(after), when))
		}
	}
	ready := readyChanged(orig.Status.Conditions, l.Status.Conditions)
	if ready == nil {
		return
	}
	switch ready.Reason {
	case kurzv1alpha1.ReasonExpired:
		if c.wants(ns, kurzv1alpha1.EventLinkExpired) && l.Spec.ExpiresAt != nil {
			at := l.Spec.ExpiresAt.Time
			c.emitter.Emit(webhooks.LinkChange(kurzv1alpha1.EventLinkExpired, l.DeepCopy(), webhooks.At(l.Generation, at), at))
		}
	case kurzv1alpha1.ReasonKeyConflict:
		if c.wants(ns, kurzv1alpha1.EventLinkConflict) {
			c.emitter.Emit(webhooks.LinkChange(kurzv1alpha1.EventLinkConflict, l.DeepCopy(), fromVersion(orig), c.now()))
		}
	}
}

// domainPatched emits domain.verified when a Domain's phase became Active
// and domain.unverified when it went from Active back to Pending.
func (c changes) domainPatched(_ context.Context, orig, d *kurzv1alpha1.Domain) {
	if c.emitter == nil || orig.Status.Phase == d.Status.Phase {
		return
	}
	var t kurzv1alpha1.WebhookEvent
	switch {
	case d.Status.Phase == kurzv1alpha1.DomainActive:
		t = kurzv1alpha1.EventDomainVerified
	case orig.Status.Phase == kurzv1alpha1.DomainActive:
		t = kurzv1alpha1.EventDomainUnverified
	default:
		return
	}
	if c.wants(d.Namespace, t) {
		c.emitter.Emit(webhooks.DomainChange(t, d.DeepCopy(), fromVersion(orig), conditionTime(d.Status.Conditions, kurzv1alpha1.ConditionReady, c.now())))
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
		c.emitter.Emit(webhooks.DomainChange(kurzv1alpha1.EventDomainTLSReady, d.DeepCopy(), fromVersion(orig), n.LastTransitionTime.Time))
	}
}

// linkDeleted emits link.deleted for a Link the informer saw deleted.
func (c changes) linkDeleted(l *kurzv1alpha1.Link) {
	if !c.wants(l.Namespace, kurzv1alpha1.EventLinkDeleted) {
		return
	}
	when := c.now()
	if t := l.DeletionTimestamp; t != nil {
		when = t.Time
	}
	c.emitter.Emit(webhooks.LinkChange(kurzv1alpha1.EventLinkDeleted, l.DeepCopy(), "", when))
}

// fromVersion is the discriminator of a transition computed from obj as
// stored at its resourceVersion: any leader that computes it from that
// state names it alike.
func fromVersion(obj client.Object) string {
	return webhooks.Generation(obj.GetGeneration()) + "@rv" + obj.GetResourceVersion()
}

// conditionTime is when condition typ last changed status, else def.
func conditionTime(conds []metav1.Condition, typ string, def time.Time) time.Time {
	if c := meta.FindStatusCondition(conds, typ); c != nil && !c.LastTransitionTime.IsZero() {
		return c.LastTransitionTime.Time
	}
	return def
}

// deletedLinks is the event handler that emits link.deleted: the Link
// controller's watch of its own kind enqueues nothing on a delete (there
// is no status left to write), so deletes reach webhooks here.
func (c changes) deletedLinks() handler.TypedEventHandler[client.Object, reconcile.Request] {
	return handler.Funcs{
		DeleteFunc: func(_ context.Context, e event.DeleteEvent, _ workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			if l, ok := e.Object.(*kurzv1alpha1.Link); ok {
				c.linkDeleted(l)
			}
		},
	}
}
