package v1alpha1

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// GetConditions returns the link's status conditions; with SetConditions it
// lets one helper write Ready, Reconciling and Stalled for both kinds.
func (l *Link) GetConditions() []metav1.Condition { return l.Status.Conditions }

// SetConditions replaces the link's status conditions.
func (l *Link) SetConditions(c []metav1.Condition) { l.Status.Conditions = c }

// GetConditions returns the domain's status conditions.
func (d *Domain) GetConditions() []metav1.Condition { return d.Status.Conditions }

// SetConditions replaces the domain's status conditions.
func (d *Domain) SetConditions(c []metav1.Condition) { d.Status.Conditions = c }

// GetConditions returns the webhook's status conditions.
func (w *Webhook) GetConditions() []metav1.Condition { return w.Status.Conditions }

// SetConditions replaces the webhook's status conditions.
func (w *Webhook) SetConditions(c []metav1.Condition) { w.Status.Conditions = c }
