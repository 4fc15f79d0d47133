package routing

import (
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	kurzv1alpha1 "github.com/kurz-dev/kurz/api/v1alpha1"
)

func TestListenerName(t *testing.T) {
	g := NewWithT(t)
	g.Expect(ListenerName("go.example.com")).To(Equal("https-go.example.com"))
	label := strings.Repeat("a", 63)
	long := label + "." + label + "." + label + "." + strings.Repeat("b", 61)
	g.Expect(long).To(HaveLen(253))
	g.Expect(validation.IsDNS1123Subdomain(ListenerName(long))).To(BeEmpty(), "a SectionName")
}

func TestDesiredHTTPRoute(t *testing.T) {
	g := NewWithT(t)
	d := &kurzv1alpha1.Domain{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "go", UID: "u-1"},
		Spec: kurzv1alpha1.DomainSpec{Domain: "go.example.com"}}
	own := GatewayConfig{Class: "example", Namespace: "kurz-system", Backend: Backend{Service: "kurz-redirect", PortNumber: 80}}

	r := DesiredHTTPRoute(own, d, "")
	g.Expect(r.Name).To(Equal("kurz-team-a.go"))
	g.Expect(r.Spec.ParentRefs).To(BeEmpty(), "unassigned until the Gateway controller gives it a listener")
	g.Expect(RouteParent(r)).To(BeEmpty())
	g.Expect(RouteHost(r)).To(Equal("go.example.com"))
	key, ok := DomainOf(r)
	g.Expect(ok).To(BeTrue())
	g.Expect(key).To(Equal(types.NamespacedName{Namespace: "team-a", Name: "go"}))

	r = DesiredHTTPRoute(own, d, "kurz-3")
	g.Expect(RouteParent(r)).To(Equal("kurz-3"))
	sections := []string{}
	for _, p := range r.Spec.ParentRefs {
		g.Expect(string(*p.Kind)).To(Equal("Gateway"))
		sections = append(sections, string(*p.SectionName))
	}
	g.Expect(sections).To(Equal([]string{"http", "https-go.example.com"}))
	same, moved := DesiredHTTPRoute(own, d, "kurz-3"), DesiredHTTPRoute(own, d, "kurz-4")
	g.Expect(Differs(r, same, &r.Spec, &same.Spec)).To(BeFalse())
	g.Expect(Differs(r, moved, &r.Spec, &moved.Spec)).To(BeTrue())

	shared := own
	shared.Class, shared.Parent = "", types.NamespacedName{Namespace: "infra", Name: "shared"}
	r = DesiredHTTPRoute(shared, d, "kurz-0")
	g.Expect(r.Spec.ParentRefs).To(HaveLen(1), "no HTTP listener of kurz's on a shared Gateway")
	g.Expect(string(*r.Spec.ParentRefs[0].Kind)).To(Equal("ListenerSet"))
}

func TestDesiredParents(t *testing.T) {
	g := NewWithT(t)
	c := GatewayConfig{Class: "example", Namespace: "kurz-system", Annotations: map[string]string{"cert-manager.io/cluster-issuer": "le"}}
	gw := DesiredGateway(c, "kurz-0", []string{"a.example.com", "b.example.com"})
	g.Expect(gw.Spec.Listeners).To(HaveLen(3))
	g.Expect(Listeners(gw)).To(Equal(map[string]string{"http": "", "https-a.example.com": "a.example.com", "https-b.example.com": "b.example.com"}))
	g.Expect(gw.Spec.Listeners[1].TLS.CertificateRefs[0].Name).To(Equal(gatewayv1.ObjectName("kurz-tls-a.example.com")))
	g.Expect(gw.Annotations).To(Equal(c.Annotations))
	g.Expect(c.Capacity()).To(Equal(63))

	c.Class, c.Parent = "", types.NamespacedName{Namespace: "infra", Name: "shared"}
	ls := DesiredListenerSet(c, "kurz-0", []string{"a.example.com"})
	g.Expect(Listeners(ls)).To(Equal(map[string]string{"https-a.example.com": "a.example.com"}))
	g.Expect(string(ls.Spec.ParentRef.Name)).To(Equal("shared"))
	g.Expect(string(*ls.Spec.ParentRef.Namespace)).To(Equal("infra"))
	g.Expect(c.Capacity()).To(Equal(64))
	g.Expect(Differs(ls, DesiredListenerSet(c, "kurz-0", []string{"a.example.com"}), &ls.Spec, &DesiredListenerSet(c, "kurz-0", []string{"a.example.com"}).Spec)).To(BeFalse())
	other := DesiredListenerSet(c, "kurz-0", nil)
	g.Expect(Differs(ls, other, &ls.Spec, &other.Spec)).To(BeTrue())
}
