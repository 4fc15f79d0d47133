package controllers

import (
	"testing"
	"time"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	kurzv1alpha1 "github.com/kurz-dev/kurz/api/v1alpha1"
)

func TestSchedule(t *testing.T) {
	s := Schedule{Recheck: time.Hour, Backoff: 30 * time.Second, BackoffMax: 10 * time.Minute}
	t0 := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	domain := func(phase kurzv1alpha1.DomainPhase, reason string, since, lastCheck time.Duration) *kurzv1alpha1.Domain {
		d := &kurzv1alpha1.Domain{ObjectMeta: metav1.ObjectMeta{Generation: 2}}
		d.Status.ObservedGeneration = 2
		d.Status.Phase = phase
		d.Status.Conditions = []metav1.Condition{{Type: kurzv1alpha1.ConditionReady, Reason: reason, LastTransitionTime: metav1.NewTime(t0.Add(since))}}
		lc := metav1.NewTime(t0.Add(lastCheck))
		d.Status.LastCheckTime = &lc
		return d
	}
	pendingAt := func(lastCheck time.Duration) *kurzv1alpha1.Domain {
		return domain(kurzv1alpha1.DomainPending, kurzv1alpha1.ReasonVerificationPending, 0, lastCheck)
	}

	intervals := []struct {
		name string
		d    *kurzv1alpha1.Domain
		want time.Duration
	}{
		{"active", domain(kurzv1alpha1.DomainActive, kurzv1alpha1.ReasonVerified, 0, 5*time.Hour), time.Hour},
		{"just pending", pendingAt(0), 30 * time.Second},
		{"pending 30s", pendingAt(30 * time.Second), 30 * time.Second},
		{"pending 1m", pendingAt(time.Minute), time.Minute},
		{"pending 4m", pendingAt(4 * time.Minute), 4 * time.Minute},
		{"pending long", pendingAt(3 * time.Hour), 10 * time.Minute},
		{"never checked", &kurzv1alpha1.Domain{}, 30 * time.Second},
	}
	for _, tt := range intervals {
		t.Run("interval "+tt.name, func(t *testing.T) {
			NewWithT(t).Expect(s.interval(tt.d)).To(Equal(tt.want))
		})
	}

	t.Run("a spec change restarts the backoff", func(t *testing.T) {
		d := pendingAt(3 * time.Hour)
		u := metav1.NewMicroTime(t0.Add(3*time.Hour - time.Minute))
		d.Status.UpdatedAt = &u
		NewWithT(t).Expect(s.interval(d)).To(Equal(time.Minute))
	})

	t.Run("pending checks double", func(t *testing.T) {
		g := NewWithT(t)
		var at []time.Duration
		last := time.Duration(0)
		for range 8 {
			last += s.interval(pendingAt(last))
			at = append(at, last)
		}
		g.Expect(at).To(Equal([]time.Duration{
			30 * time.Second, time.Minute, 2 * time.Minute, 4 * time.Minute, 8 * time.Minute,
			16 * time.Minute, 26 * time.Minute, 36 * time.Minute,
		}))
	})

	due := []struct {
		name string
		d    func() *kurzv1alpha1.Domain
		now  time.Duration
		want bool
	}{
		{"never checked", func() *kurzv1alpha1.Domain { d := pendingAt(0); d.Status.LastCheckTime = nil; return d }, 0, true},
		{"spec changed", func() *kurzv1alpha1.Domain { d := pendingAt(0); d.Generation = 3; return d }, 0, true},
		// A Domain that does not own its hostname is checked on the
		// pending schedule: its TXT record can move the hostname to it.
		{"claimed, waiting", func() *kurzv1alpha1.Domain {
			return domain(kurzv1alpha1.DomainPending, kurzv1alpha1.ReasonDomainClaimed, 0, 0)
		}, 0, false},
		{"TXT required, wait over", func() *kurzv1alpha1.Domain {
			return domain(kurzv1alpha1.DomainPending, kurzv1alpha1.ReasonTXTRequired, 0, 0)
		}, 30 * time.Second, true},
		{"pending, waiting", func() *kurzv1alpha1.Domain { return pendingAt(0) }, 29 * time.Second, false},
		{"pending, wait over", func() *kurzv1alpha1.Domain { return pendingAt(0) }, 30 * time.Second, true},
		{"active, waiting", func() *kurzv1alpha1.Domain {
			return domain(kurzv1alpha1.DomainActive, kurzv1alpha1.ReasonVerified, 0, 0)
		}, 59 * time.Minute, false},
		{"active, wait over", func() *kurzv1alpha1.Domain {
			return domain(kurzv1alpha1.DomainActive, kurzv1alpha1.ReasonVerified, 0, 0)
		}, time.Hour, true},
	}
	for _, tt := range due {
		t.Run("due "+tt.name, func(t *testing.T) {
			NewWithT(t).Expect(s.checkDue(tt.d(), t0.Add(tt.now))).To(Equal(tt.want))
		})
	}
}
