package claims_test

import (
	"testing"
	"time"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	kurzv1alpha1 "github.com/kurz-dev/kurz/api/v1alpha1"
	"github.com/kurz-dev/kurz/internal/claims"
)

// TestKeyHolder: the oldest Link not being deleted holds the key; ties on
// the one-second creationTimestamp break by name. KeyWinner, which takes
// whole Links, agrees with KeyHolder, which takes the facts only.
func TestKeyHolder(t *testing.T) {
	claim := func(name string, age time.Duration, deleting bool) claims.KeyClaim {
		return claims.KeyClaim{Namespace: "ns", Name: name, Created: t0.Add(-age), Deleting: deleting}
	}
	tests := []struct {
		name string
		cs   []claims.KeyClaim
		want int
	}{
		{"none", nil, -1},
		{"oldest wins", []claims.KeyClaim{claim("young", time.Minute, false), claim("old", time.Hour, false)}, 1},
		{"tie breaks by name", []claims.KeyClaim{claim("b", time.Hour, false), claim("a", time.Hour, false)}, 1},
		{"a Link being deleted claims nothing", []claims.KeyClaim{claim("young", time.Minute, false), claim("old", time.Hour, true)}, 0},
		{"all being deleted", []claims.KeyClaim{claim("old", time.Hour, true)}, -1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			g.Expect(claims.KeyHolder(tt.cs)).To(Equal(tt.want))

			links := make([]kurzv1alpha1.Link, len(tt.cs))
			for i, c := range tt.cs {
				links[i].ObjectMeta = metav1.ObjectMeta{Namespace: c.Namespace, Name: c.Name, CreationTimestamp: metav1.NewTime(c.Created)}
				if c.Deleting {
					links[i].DeletionTimestamp = &links[i].CreationTimestamp
				}
				g.Expect(claims.KeyClaimOf(&links[i])).To(Equal(c))
			}
			w := claims.KeyWinner(links)
			if tt.want < 0 {
				g.Expect(w).To(BeNil())
			} else {
				g.Expect(w).To(BeIdenticalTo(&links[tt.want]))
			}
		})
	}
}
