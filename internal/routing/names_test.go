package routing

import (
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/util/validation"
)

func TestSecretName(t *testing.T) {
	g := NewWithT(t)
	g.Expect(SecretName("go.example.com")).To(Equal("kurz-tls-go.example.com"))

	// A 253-character hostname: too long for a prefix, so shortened and
	// hashed; two hostnames sharing the kept prefix still differ.
	label := strings.Repeat("a", 63)
	long1 := label + "." + label + "." + label + "." + strings.Repeat("b", 58) + ".io"
	long2 := label + "." + label + "." + label + "." + strings.Repeat("b", 58) + ".de"
	g.Expect(long1).To(HaveLen(253))
	for _, h := range []string{long1, long2} {
		n := SecretName(h)
		g.Expect(validation.IsDNS1123Subdomain(n)).To(BeEmpty(), n)
		g.Expect(len(n)).To(BeNumerically("<=", 253))
		g.Expect(n).To(HavePrefix("kurz-tls-aaaa"))
	}
	g.Expect(SecretName(long1)).NotTo(Equal(SecretName(long2)))
}

// A shortened name never ends its kept part on '.' or '-', which would
// leave an empty or '-'-led label before the hash.
func TestBoundedNameStaysValid(t *testing.T) {
	g := NewWithT(t)
	for cut := range 12 {
		s := strings.Repeat("x", 240-cut) + "." + strings.Repeat("y", 30)
		n := boundedName("kurz-tls-", s)
		g.Expect(validation.IsDNS1123Subdomain(n)).To(BeEmpty(), n)
	}
}

func TestIngressName(t *testing.T) {
	g := NewWithT(t)
	g.Expect(IngressName("team-a", "go")).To(Equal("kurz-team-a.go"))
	// Namespaces hold no dot, so these cannot collide.
	g.Expect(IngressName("a-b", "c")).NotTo(Equal(IngressName("a", "b-c")))
	long := IngressName(strings.Repeat("n", 63), strings.Repeat("d", 253))
	g.Expect(validation.IsDNS1123Subdomain(long)).To(BeEmpty())
}
