package controllers

import (
	"testing"
	"time"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/event"

	kurzv1alpha1 "github.com/kurz-dev/kurz/api/v1alpha1"
)

func TestSpecOrClaimChanged(t *testing.T) {
	base := &kurzv1alpha1.Domain{
		ObjectMeta: metav1.ObjectMeta{Name: "d", Generation: 1},
		Spec:       kurzv1alpha1.DomainSpec{Domain: "go.test"},
	}
	claimed := base.DeepCopy()
	claimed.Status.Claim = &kurzv1alpha1.DomainClaim{Hostname: "go.test", Since: metav1.NewMicroTime(time.Unix(1, 0))}
	reclaimed := claimed.DeepCopy()
	reclaimed.Status.Claim.Since = metav1.NewMicroTime(time.Unix(2, 0))
	checked := claimed.DeepCopy()
	checked.Status.LastCheckTime = &metav1.Time{Time: time.Unix(3, 0)}
	edited := claimed.DeepCopy()
	edited.Generation = 2
	marked := claimed.DeepCopy()
	marked.Status.Claim.DecidedAt = &metav1.MicroTime{Time: time.Unix(4, 0)}
	healed := marked.DeepCopy()
	healed.Status.Claim.Contested = true

	tests := []struct {
		name     string
		old, new *kurzv1alpha1.Domain
		want     bool
	}{
		{"claim recorded", base, claimed, true},
		{"claim renewed", claimed, reclaimed, true},
		{"other status write", claimed, checked, false},
		{"claim marked decided", claimed, marked, false},
		{"contested decided again", marked, healed, true},
		{"spec change", claimed, edited, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			NewWithT(t).Expect(specOrClaimChanged.Update(event.UpdateEvent{ObjectOld: tt.old, ObjectNew: tt.new})).To(Equal(tt.want))
		})
	}
	NewWithT(t).Expect(specOrClaimChanged.Create(event.CreateEvent{Object: base})).To(BeTrue())
}

func TestNotInInitialList(t *testing.T) {
	g := NewWithT(t)
	l := &kurzv1alpha1.Link{ObjectMeta: metav1.ObjectMeta{Name: "l"}}
	g.Expect(notInInitialList.Create(event.CreateEvent{Object: l, IsInInitialList: true})).To(BeFalse())
	g.Expect(notInInitialList.Create(event.CreateEvent{Object: l})).To(BeTrue())
	g.Expect(notInInitialList.Update(event.UpdateEvent{ObjectOld: l, ObjectNew: l})).To(BeTrue())
	g.Expect(notInInitialList.Delete(event.DeleteEvent{Object: l})).To(BeTrue())
}
