package controllers

import (
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	kurzv1alpha1 "github.com/kurz-dev/kurz/api/v1alpha1"
)

// conditioned is a kind whose conditions setReadiness writes: Link and
// Domain.
type conditioned interface {
	GetGeneration() int64
	GetConditions() []metav1.Condition
	SetConditions([]metav1.Condition)
}

// progress is how a state reads to kstatus (see the api package docs).
type progress int

const (
	// settled: Ready=True, kstatus Current.
	settled progress = iota
	// waiting: Ready=False and Reconciling=True, kstatus InProgress; the
	// world (DNS, another object appearing) settles it.
	waiting
	// stalled: Ready=False and Stalled=True, kstatus Failed; only a spec
	// change or another object's removal settles it.
	stalled
)

// readiness is an object's state as its three conditions say it.
type readiness struct {
	progress progress
	// reason and message are Ready's.
	reason, message string
	// cause is the reason of Reconciling or Stalled; reason when empty.
	cause string
}

// setReadiness writes Ready, Reconciling and Stalled from r, for the
// object's current generation. Reconciling and Stalled are removed while
// not True: kstatus reads them as abnormal-true, and absent conditions
// keep `kubectl get -o yaml` short for the usual settled object.
func setReadiness(obj conditioned, r readiness) {
	conds := obj.GetConditions()
	gen := obj.GetGeneration()
	status := metav1.ConditionFalse
	if r.progress == settled {
		status = metav1.ConditionTrue
	}
	meta.SetStatusCondition(&conds, metav1.Condition{
		Type: kurzv1alpha1.ConditionReady, Status: status,
		Reason: r.reason, Message: r.message, ObservedGeneration: gen,
	})
	cause := r.cause
	if cause == "" {
		cause = r.reason
	}
	setAbnormal(&conds, kurzv1alpha1.ConditionReconciling, r.progress == waiting, cause, r.message, gen)
	setAbnormal(&conds, kurzv1alpha1.ConditionStalled, r.progress == stalled, cause, r.message, gen)
	obj.SetConditions(conds)
}

// setAbnormal sets an abnormal-true condition when on, else removes it.
func setAbnormal(conds *[]metav1.Condition, typ string, on bool, reason, message string, gen int64) {
	if !on {
		meta.RemoveStatusCondition(conds, typ)
		return
	}
	meta.SetStatusCondition(conds, metav1.Condition{
		Type: typ, Status: metav1.ConditionTrue,
		Reason: reason, Message: message, ObservedGeneration: gen,
	})
}
