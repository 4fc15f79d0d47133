package routing

import (
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	kurzv1alpha1 "github.com/kurz-dev/kurz/api/v1alpha1"
)

func TestParseBackend(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Backend
		err  string
	}{
		{in: "kurz-redirect:http", want: Backend{Service: "kurz-redirect", PortName: "http"}},
		{in: "kurz-redirect:8081", want: Backend{Service: "kurz-redirect", PortNumber: 8081}},
		{in: "kurz-redirect", err: "want SERVICE:PORT"},
		{in: ":http", err: "want SERVICE:PORT"},
		{in: "Kurz_Redirect:http", err: "service name"},
		{in: "kurz-redirect:0", err: "1-65535"},
		{in: "kurz-redirect:not_a_port", err: "port name"},
	} {
		g := NewWithT(t)
		b, err := ParseBackend(tc.in)
		if tc.err != "" {
			g.Expect(err).To(MatchError(ContainSubstring(tc.err)), tc.in)
			continue
		}
		g.Expect(err).NotTo(HaveOccurred(), tc.in)
		g.Expect(b).To(Equal(tc.want))
		g.Expect(b.String()).To(Equal(tc.in))
	}
}

func TestParseAnnotation(t *testing.T) {
	g := NewWithT(t)
	k, v, err := ParseAnnotation("cert-manager.io/cluster-issuer=letsencrypt")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect([]string{k, v}).To(Equal([]string{"cert-manager.io/cluster-issuer", "letsencrypt"}))
	k, v, err = ParseAnnotation("a=b=c")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect([]string{k, v}).To(Equal([]string{"a", "b=c"}), "the value may hold '='")
	for _, bad := range []string{"no-value", "bad key=x", "kurz.dev/domain=x"} {
		_, _, err := ParseAnnotation(bad)
		g.Expect(err).To(HaveOccurred(), bad)
	}
}

func TestDesiredIngressLabels(t *testing.T) {
	g := NewWithT(t)
	c := IngressConfig{Class: "nginx", Namespace: "kurz-system", Backend: Backend{Service: "kurz-redirect", PortNumber: 80}}
	d := &kurzv1alpha1.Domain{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: strings.Repeat("d", 70), UID: "u-1"},
		Spec: kurzv1alpha1.DomainSpec{Domain: "go.example.com"}}
	ing := DesiredIngress(c, d)
	g.Expect(ing.Labels).NotTo(HaveKey(LabelDomainName), "a name longer than a label value is left to the annotation")
	g.Expect(ing.Labels).To(HaveKeyWithValue(LabelDomainUID, "u-1"))
	g.Expect(ing.Spec.Rules[0].HTTP.Paths[0].Backend.Service.Port.Number).To(Equal(int32(80)))
	key, ok := DomainOf(ing)
	g.Expect(ok).To(BeTrue())
	g.Expect(key).To(Equal(types.NamespacedName{Namespace: "team-a", Name: d.Name}))
	same := DesiredIngress(c, d)
	g.Expect(Differs(ing, same, &ing.Spec, &same.Spec)).To(BeFalse())
	c.Annotations = map[string]string{"x": "y"}
	annotated := DesiredIngress(c, d)
	g.Expect(Differs(ing, annotated, &ing.Spec, &annotated.Spec)).To(BeTrue())

	// Not kurz's: no Domain.
	delete(ing.Labels, LabelManagedBy)
	_, ok = DomainOf(ing)
	g.Expect(ok).To(BeFalse())
}
