package redirect

import (
	"context"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	kurzv1alpha1 "github.com/kurz-dev/kurz/api/v1alpha1"
	"github.com/kurz-dev/kurz/internal/testenv"
)

// setClaim writes the claim the Domain controller would record.
func setClaim(t *testing.T, d *kurzv1alpha1.Domain, contested bool, proof kurzv1alpha1.DomainProof) {
	t.Helper()
	d.Status.Claim = &kurzv1alpha1.DomainClaim{Hostname: string(d.Spec.Domain), Since: metav1.NowMicro(), Contested: contested, Proof: proof}
	NewWithT(t).Expect(k8s.Status().Update(context.Background(), d)).To(Succeed())
}

// TestSquatterNeverServes: real redirect requests follow the ownership
// rules. A squatter's contested Domain (its DNS "proven" by the CNAME that
// points the victim's hostname at kurz) never serves its links on the
// victim's hostname, not even after the victim's Domain is deleted; the
// victim's recreated Domain serves again.
func TestSquatterNeverServes(t *testing.T) {
	testenv.Need(t)
	g := NewWithT(t)
	victimNS, squatNS := newNamespace(t), newNamespace(t)
	const hostname = "links.victim-squat.test"
	victim := createDomain(t, victimNS, "d", hostname, nil)
	setClaim(t, victim, false, kurzv1alpha1.ProofTarget)
	createLink(t, victimNS, "l", hostname, "k", "https://victim.example/", nil)
	squat := createDomain(t, squatNS, "d", hostname, nil)
	setClaim(t, squat, true, kurzv1alpha1.ProofTarget)
	createLink(t, squatNS, "l", hostname, "k", "https://phish.example/", nil)
	createLink(t, squatNS, "only", hostname, "only", "https://phish.example/only", nil)
	ts := startServer(t, testOptions())

	g.Eventually(func() string { return do(t, "GET", ts.base, hostname, "/k", nil).location }, 30*time.Second).
		Should(Equal("https://victim.example/"))
	g.Expect(do(t, "GET", ts.base, hostname, "/only", nil).status).To(Equal(404))

	g.Expect(k8s.Delete(context.Background(), victim)).To(Succeed())
	g.Eventually(func() int { return do(t, "GET", ts.base, hostname, "/k", nil).status }, 10*time.Second).Should(Equal(404))
	g.Consistently(func() []int {
		return []int{do(t, "GET", ts.base, hostname, "/k", nil).status, do(t, "GET", ts.base, hostname, "/only", nil).status}
	}, time.Second).Should(Equal([]int{404, 404}))

	again := createDomain(t, victimNS, "d", hostname, nil)
	setClaim(t, again, false, kurzv1alpha1.ProofNone)
	g.Eventually(func() string { return do(t, "GET", ts.base, hostname, "/k", nil).location }, 10*time.Second).
		Should(Equal("https://victim.example/"))
}
