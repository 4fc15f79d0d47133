package claims_test

import (
	"testing"
	"time"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	kurzv1alpha1 "github.com/kurz-dev/kurz/api/v1alpha1"
	"github.com/kurz-dev/kurz/internal/claims"
)

var t0 = time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)

func domain(ns, name string, age time.Duration) kurzv1alpha1.Domain {
	return kurzv1alpha1.Domain{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, CreationTimestamp: metav1.NewTime(t0.Add(-age))},
		Spec:       kurzv1alpha1.DomainSpec{Domain: "go.test"},
	}
}

func link(ns, name, key string, age time.Duration) kurzv1alpha1.Link {
	return kurzv1alpha1.Link{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, CreationTimestamp: metav1.NewTime(t0.Add(-age))},
		Spec:       kurzv1alpha1.LinkSpec{Domain: "go.test", Key: key},
	}
}

func TestLinkReason(t *testing.T) {
	deleting := metav1.NewTime(t0)
	expiredAt := metav1.NewTime(t0)
	laterAt := metav1.NewTime(t0.Add(time.Second))

	self := link("a", "self", "k", time.Hour)
	expired := self
	expired.Spec.ExpiresAt = &expiredAt
	notYet := self
	notYet.Spec.ExpiresAt = &laterAt
	olderOwner := domain("b", "d", 2*time.Hour)
	olderDeleting := olderOwner
	olderDeleting.DeletionTimestamp = &deleting

	tests := []struct {
		name    string
		link    kurzv1alpha1.Link
		domains []kurzv1alpha1.Domain
		peers   []kurzv1alpha1.Link
		want    string
	}{
		{"no domain", self, nil, nil, kurzv1alpha1.ReasonDomainNotFound},
		{"domain in another namespace only", self, []kurzv1alpha1.Domain{domain("b", "d", time.Hour)}, nil, kurzv1alpha1.ReasonDomainNotFound},
		{"hostname claimed by an older namespace", self, []kurzv1alpha1.Domain{domain("a", "d", time.Hour), olderOwner}, nil, kurzv1alpha1.ReasonDomainNotFound},
		{"older claim being deleted", self, []kurzv1alpha1.Domain{domain("a", "d", time.Hour), olderDeleting}, nil, kurzv1alpha1.ReasonActive},
		{"active", self, []kurzv1alpha1.Domain{domain("a", "d", time.Hour)}, []kurzv1alpha1.Link{self}, kurzv1alpha1.ReasonActive},
		{"older peer holds the key", self, []kurzv1alpha1.Domain{domain("a", "d", time.Hour)}, []kurzv1alpha1.Link{self, link("a", "old", "k", 2*time.Hour)}, kurzv1alpha1.ReasonKeyConflict},
		{"same second, name breaks the tie", self, []kurzv1alpha1.Domain{domain("a", "d", time.Hour)}, []kurzv1alpha1.Link{link("a", "aaa", "k", time.Hour)}, kurzv1alpha1.ReasonKeyConflict},
		{"newer peer", self, []kurzv1alpha1.Domain{domain("a", "d", time.Hour)}, []kurzv1alpha1.Link{link("a", "new", "k", time.Minute)}, kurzv1alpha1.ReasonActive},
		{"older peer with another key", self, []kurzv1alpha1.Domain{domain("a", "d", time.Hour)}, []kurzv1alpha1.Link{link("a", "old", "other", 2*time.Hour)}, kurzv1alpha1.ReasonActive},
		{"older peer in another namespace", self, []kurzv1alpha1.Domain{domain("a", "d", time.Hour)}, []kurzv1alpha1.Link{link("b", "old", "k", 2*time.Hour)}, kurzv1alpha1.ReasonActive},
		{"expired", expired, []kurzv1alpha1.Domain{domain("a", "d", time.Hour)}, nil, kurzv1alpha1.ReasonExpired},
		{"not yet expired", notYet, []kurzv1alpha1.Domain{domain("a", "d", time.Hour)}, nil, kurzv1alpha1.ReasonActive},
		{"conflict wins over expiry", expired, []kurzv1alpha1.Domain{domain("a", "d", time.Hour)}, []kurzv1alpha1.Link{link("a", "old", "k", 2*time.Hour)}, kurzv1alpha1.ReasonKeyConflict},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			NewWithT(t).Expect(claims.LinkReason(&tt.link, tt.domains, tt.peers, t0)).To(Equal(tt.want))
		})
	}
}

func TestExpiresIn(t *testing.T) {
	g := NewWithT(t)
	l := link("a", "l", "k", 0)
	_, ok := claims.ExpiresIn(&l, t0)
	g.Expect(ok).To(BeFalse())
	at := metav1.NewTime(t0.Add(90 * time.Second))
	l.Spec.ExpiresAt = &at
	d, ok := claims.ExpiresIn(&l, t0)
	g.Expect(ok).To(BeTrue())
	g.Expect(d).To(Equal(90 * time.Second))
	_, ok = claims.ExpiresIn(&l, at.Time)
	g.Expect(ok).To(BeFalse())
}
