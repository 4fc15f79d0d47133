package controllers

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/events"

	kurzv1alpha1 "github.com/kurz-dev/kurz/api/v1alpha1"
)

// readyChanged returns the new Ready condition when its status or reason
// differs from the old one (a transition), else nil.
func readyChanged(before, after []metav1.Condition) *metav1.Condition {
	return conditionChanged(before, after, kurzv1alpha1.ConditionReady)
}

// conditionChanged returns the new condition of type t when its status or
// reason differs from the old one (a transition), else nil.
func conditionChanged(before, after []metav1.Condition, t string) *metav1.Condition {
	n := meta.FindStatusCondition(after, t)
	if n == nil {
		return nil
	}
	o := meta.FindStatusCondition(before, t)
	if o != nil && o.Status == n.Status && o.Reason == n.Reason {
		return nil
	}
	return n
}

// recordTransition emits an event for a Ready transition; the event reason
// is the condition reason, the note its message (which never holds secrets).
func recordTransition(rec events.EventRecorder, obj runtime.Object, c *metav1.Condition) {
	if rec == nil || c == nil {
		return
	}
	eventType := corev1.EventTypeNormal
	if kurzv1alpha1.IsWarning(c.Reason) {
		eventType = corev1.EventTypeWarning
	}
	rec.Eventf(obj, nil, eventType, c.Reason, "Reconcile", "%s", c.Message)
}
