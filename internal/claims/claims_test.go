package claims_test

import (
	"testing"
	"time"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	kurzv1alpha1 "github.com/kurz-dev/kurz/api/v1alpha1"
	"github.com/kurz-dev/kurz/internal/claims"
)

// claimed is domain(ns, name, age) with a claim on host, made ago before t0.
func claimed(ns, name string, age time.Duration, host string, ago time.Duration) kurzv1alpha1.Domain {
	d := domain(ns, name, age)
	d.Status.Claim = &kurzv1alpha1.DomainClaim{Hostname: host, Since: metav1.NewMicroTime(t0.Add(-ago))}
	return d
}

// edited is d at generation 2: its spec changed since its creation.
func edited(d kurzv1alpha1.Domain) kurzv1alpha1.Domain {
	d.Generation = 2
	return d
}

func TestDomainOwner(t *testing.T) {
	deleting := metav1.NewTime(t0)
	oldOwner := claimed("a", "d", 2*time.Hour, "go.test", 2*time.Hour)
	oldOwner.DeletionTimestamp = &deleting

	tests := []struct {
		name    string
		domains []kurzv1alpha1.Domain
		want    string // namespace of the owner, "" for none
	}{
		{"none", nil, ""},
		{"no claims: the oldest Domain", []kurzv1alpha1.Domain{domain("b", "d", time.Hour), domain("a", "d", 2*time.Hour)}, "a"},
		{"no claims, same second: namespace breaks the tie", []kurzv1alpha1.Domain{domain("b", "d", time.Hour), domain("a", "d", time.Hour)}, "a"},
		{"a claim recorded in the second another Domain was created ranks first", []kurzv1alpha1.Domain{
			domain("a", "d", time.Hour), claimed("b", "d", time.Hour, "go.test", time.Hour)}, "b"},
		{"the oldest claim, not the oldest Domain", []kurzv1alpha1.Domain{
			claimed("a", "d", 48*time.Hour, "go.test", time.Minute),
			claimed("b", "d", time.Hour, "go.test", time.Hour),
		}, "b"},
		// The hijack: an old Domain edited to another workspace's hostname
		// still carries its claim on its former hostname.
		{"a stale claim ranks after a current one", []kurzv1alpha1.Domain{
			claimed("a", "d", 48*time.Hour, "old.test", 48*time.Hour),
			claimed("b", "d", time.Hour, "go.test", time.Hour),
		}, "b"},
		// A Domain the controller has not reached yet (a backlog), never
		// edited, has claimed its hostname since its creation.
		{"no claim yet: since its creation", []kurzv1alpha1.Domain{
			domain("a", "d", 48*time.Hour),
			claimed("b", "d", time.Hour, "go.test", time.Minute),
		}, "a"},
		{"no claim yet, younger than a current one", []kurzv1alpha1.Domain{
			domain("a", "d", time.Minute),
			claimed("b", "d", time.Hour, "go.test", time.Hour),
		}, "b"},
		// Edited and not reconciled: its claim begins when recorded.
		{"an edited Domain ranks after a current one", []kurzv1alpha1.Domain{
			edited(domain("a", "d", 48*time.Hour)),
			claimed("b", "d", time.Hour, "go.test", time.Minute),
		}, "b"},
		{"a stale claim ranks after a Domain not yet claimed", []kurzv1alpha1.Domain{
			domain("b", "d", time.Hour),
			claimed("a", "d", 2*time.Hour, "old.test", 48*time.Hour),
		}, "b"},
		{"stale and edited rank by age", []kurzv1alpha1.Domain{
			edited(domain("b", "d", time.Hour)),
			claimed("a", "d", 2*time.Hour, "old.test", 48*time.Hour),
		}, "a"},
		{"same claim time: creation breaks the tie", []kurzv1alpha1.Domain{
			claimed("a", "d", time.Hour, "go.test", time.Minute),
			claimed("b", "d", 2*time.Hour, "go.test", time.Minute),
		}, "b"},
		{"same claim time and creation: namespace breaks the tie", []kurzv1alpha1.Domain{
			claimed("b", "d", time.Hour, "go.test", time.Minute),
			claimed("a", "d", time.Hour, "go.test", time.Minute),
		}, "a"},
		{"a claim being deleted passes on", []kurzv1alpha1.Domain{oldOwner, claimed("b", "d", time.Hour, "go.test", time.Minute)}, "b"},
		{"only deleting", []kurzv1alpha1.Domain{oldOwner}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			owner := claims.DomainOwner(tt.domains)
			if tt.want == "" {
				g.Expect(owner).To(BeNil())
				return
			}
			g.Expect(owner).NotTo(BeNil())
			g.Expect(owner.Namespace).To(Equal(tt.want))
		})
	}
}

func TestClaimSince(t *testing.T) {
	g := NewWithT(t)
	d := domain("a", "d", time.Hour)
	_, ok := claims.ClaimSince(&d)
	g.Expect(ok).To(BeFalse())
	d = claimed("a", "d", time.Hour, "other.test", time.Minute)
	_, ok = claims.ClaimSince(&d)
	g.Expect(ok).To(BeFalse())
	d = claimed("a", "d", time.Hour, "go.test", time.Minute)
	since, ok := claims.ClaimSince(&d)
	g.Expect(ok).To(BeTrue())
	g.Expect(since.Time).To(Equal(t0.Add(-time.Minute)))
}
