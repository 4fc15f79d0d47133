package controllers_test

import (
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kurzv1alpha1 "github.com/kurz-dev/kurz/api/v1alpha1"
	"github.com/kurz-dev/kurz/controllers"
	"github.com/kurz-dev/kurz/internal/claims"
	"github.com/kurz-dev/kurz/internal/dns/dnstest"
	"github.com/kurz-dev/kurz/internal/routing"
	"github.com/kurz-dev/kurz/internal/testenv"
)

// startIngressControllers starts a DNS server (newDNS) and controllers
// that keep Ingresses of class nginx, with a cert-manager annotation and an
// hour's grace period, in a namespace of their own; it returns the server
// and that namespace.
func startIngressControllers(t *testing.T) (*dnstest.Server, string) {
	t.Helper()
	srv := newDNS(t)
	ingressNS := newNamespace(t, "kurz-ing")
	o := testOptions(srv)
	o.Ingress.Class = "nginx"
	o.Routes.Namespace = ingressNS
	o.Ingress.Annotations = map[string]string{"cert-manager.io/cluster-issuer": "letsencrypt"}
	o.Routes.GracePeriod = time.Hour
	start(t, newManager(t, cfg, o, nil))
	return srv, ingressNS
}

// publishTXT publishes d's challenge record for hostname, whose value
// derives from d's namespace uid.
func publishTXT(t *testing.T, srv *dnstest.Server, ns, hostname string) {
	t.Helper()
	n := &corev1.Namespace{}
	if err := k8sClient.Get(ctx, types.NamespacedName{Name: ns}, n); err != nil {
		t.Fatal(err)
	}
	srv.Set(kurzv1alpha1.ChallengeRecordPrefix+hostname, dnsTypeTXT, claims.ChallengeValue(n.UID, hostname))
}

// ingressOf fetches the Ingress of Domain ns/name in ingressNS (nil: none).
func ingressOf(ingressNS, ns, name string) func(Gomega) *networkingv1.Ingress {
	return objectOf[networkingv1.Ingress](ingressNS, routing.IngressName(ns, name))
}

// tlsReadyOf fetches d and returns its TLSReady condition as "Status/Reason".
func tlsReadyOf(d *kurzv1alpha1.Domain) func(Gomega) string {
	return func(g Gomega) string {
		g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(d), d)).To(Succeed())
		c := meta.FindStatusCondition(d.Status.Conditions, kurzv1alpha1.ConditionTLSReady)
		if c == nil {
			return ""
		}
		return string(c.Status) + "/" + c.Reason
	}
}

func TestIngressFollowsDomain(t *testing.T) {
	testenv.Need(t)
	g := NewWithT(t)
	srv, ingressNS := startIngressControllers(t)
	ns := newNamespace(t, "ing")
	hostA, hostB := host(t, "go.ing.test"), host(t, "links.ing.test")

	d := createDomain(g, ns, "go", hostA, pending)
	g.Eventually(tlsReadyOf(d), timeout, poll).Should(Equal("False/" + kurzv1alpha1.ReasonRoutePending))
	g.Expect(ingressOf(ingressNS, ns, "go")(g)).To(BeNil(), "no Ingress before the Domain is verified")

	publishTXT(t, srv, ns, hostA)
	g.Eventually(ingressOf(ingressNS, ns, "go"), timeout, poll).ShouldNot(BeNil())
	ing := ingressOf(ingressNS, ns, "go")(g)
	g.Expect(ing.Spec.IngressClassName).To(Equal(ptr.To("nginx")))
	g.Expect(ing.Spec.Rules).To(HaveLen(1))
	g.Expect(ing.Spec.Rules[0].Host).To(Equal(hostA))
	paths := ing.Spec.Rules[0].HTTP.Paths
	g.Expect(paths).To(HaveLen(1))
	g.Expect(paths[0].Path).To(Equal("/"))
	g.Expect(*paths[0].PathType).To(Equal(networkingv1.PathTypePrefix))
	g.Expect(paths[0].Backend.Service.Name).To(Equal("kurz-redirect"))
	g.Expect(paths[0].Backend.Service.Port.Name).To(Equal("http"))
	g.Expect(ing.Spec.TLS).To(Equal([]networkingv1.IngressTLS{{Hosts: []string{hostA}, SecretName: "kurz-tls-" + hostA}}))
	g.Expect(ing.Annotations).To(HaveKeyWithValue("cert-manager.io/cluster-issuer", "letsencrypt"))
	g.Expect(ing.Annotations).To(HaveKeyWithValue(routing.AnnotationDomain, ns+"/go"))
	g.Expect(d.UID).NotTo(BeEmpty())
	g.Expect(ing.Labels).To(Equal(map[string]string{
		routing.LabelManagedBy:       "kurz",
		routing.LabelDomainNamespace: ns,
		routing.LabelDomainName:      "go",
		routing.LabelDomainUID:       string(d.UID),
	}))
	// No certificate yet: the Secret is what is missing.
	g.Eventually(tlsReadyOf(d), timeout, poll).Should(Equal("False/" + kurzv1alpha1.ReasonSecretMissing))
	g.Expect(d.Status.TLS).To(Equal(&kurzv1alpha1.DomainTLS{Ingress: ing.Name, SecretName: "kurz-tls-" + hostA}))
	// A settled Ingress is not rewritten.
	rv := ing.ResourceVersion
	g.Consistently(func(g Gomega) string { return ingressOf(ingressNS, ns, "go")(g).ResourceVersion }, "1s", poll).Should(Equal(rv))

	// Renamed: the same Ingress routes the new hostname once it is verified.
	publishTXT(t, srv, ns, hostB)
	setHostname(g, d, hostB)
	g.Eventually(func(g Gomega) []networkingv1.IngressTLS {
		ing := ingressOf(ingressNS, ns, "go")(g)
		g.Expect(ing).NotTo(BeNil())
		g.Expect(ing.Spec.Rules[0].Host).To(Equal(hostB))
		return ing.Spec.TLS
	}, timeout, poll).Should(Equal([]networkingv1.IngressTLS{{Hosts: []string{hostB}, SecretName: "kurz-tls-" + hostB}}))

	// Deleted: its Ingress goes at once, whatever the grace period.
	g.Expect(k8sClient.Delete(ctx, d)).To(Succeed())
	g.Eventually(ingressOf(ingressNS, ns, "go"), timeout, poll).Should(BeNil())
}

func TestIngressOnlyForTheHostnameOwner(t *testing.T) {
	testenv.Need(t)
	g := NewWithT(t)
	srv, ingressNS := startIngressControllers(t)
	nsA, nsB := newNamespace(t, "own-a"), newNamespace(t, "own-b")
	// A is proven by its CNAME; B, younger, only claims.
	h := targetedHost(t, srv, "go.own.test")
	createDomain(g, nsA, "go", h, verified)
	g.Eventually(ingressOf(ingressNS, nsA, "go"), timeout, poll).ShouldNot(BeNil())

	b := createDomain(g, nsB, "go", h, claimed)
	g.Eventually(tlsReadyOf(b), timeout, poll).Should(Equal("False/" + kurzv1alpha1.ReasonRoutePending))
	g.Consistently(ingressOf(ingressNS, nsB, "go"), "1s", poll).Should(BeNil(), "a Domain that does not hold its hostname gets no Ingress")

	// B publishes its TXT record: TXT proof outranks A's CNAME, the
	// hostname moves, and A's Ingress goes at once (the grace period is for
	// an owner whose DNS wavers, not for a lost hostname).
	publishTXT(t, srv, nsB, h)
	g.Eventually(readyOf(b), timeout, poll).Should(Equal(verified))
	g.Eventually(ingressOf(ingressNS, nsB, "go"), timeout, poll).ShouldNot(BeNil())
	g.Eventually(ingressOf(ingressNS, nsA, "go"), timeout, poll).Should(BeNil())
}

func TestIngressKeptThroughGracePeriod(t *testing.T) {
	testenv.Need(t)
	g := NewWithT(t)
	srv, ingressNS := startIngressControllers(t)
	ns, h := namespaceAndHost(t, "grace")

	publishTXT(t, srv, ns, h)
	d := newDomain(ns, "go", h)
	g.Expect(k8sClient.Create(ctx, d)).To(Succeed())
	g.Eventually(ingressOf(ingressNS, ns, "go"), timeout, poll).ShouldNot(BeNil())

	// The record goes: the Domain drops to Pending, its Ingress stays.
	srv.Set(kurzv1alpha1.ChallengeRecordPrefix+h, dnsTypeTXT)
	g.Eventually(readyOf(d), timeout, poll).Should(Equal(pending))
	g.Consistently(ingressOf(ingressNS, ns, "go"), "2s", poll).ShouldNot(BeNil())
	g.Expect(tlsReadyOf(d)(g)).To(Equal("False/"+kurzv1alpha1.ReasonSecretMissing), "TLSReady still describes the kept Ingress")

	g.Expect(k8sClient.Delete(ctx, d)).To(Succeed())
	g.Eventually(ingressOf(ingressNS, ns, "go"), timeout, poll).Should(BeNil())
}

func TestIngressOrphansRemovedOnStart(t *testing.T) {
	testenv.Need(t)
	g := NewWithT(t)
	srv := newDNS(t)
	ingressNS := newNamespace(t, "kurz-orphans")

	// Left by a Domain deleted while kurz was down, and one that is not kurz's.
	desired := routing.DesiredIngress(routing.IngressConfig{
		Class: "nginx", Namespace: ingressNS, Backend: routing.Backend{Service: "kurz-redirect", PortName: "http"},
	}, newDomain("gone", "go", host(t, "go.orphan.test")))
	g.Expect(k8sClient.Create(ctx, desired)).To(Succeed())
	foreign := desired.DeepCopy()
	foreign.ObjectMeta = metav1.ObjectMeta{Namespace: ingressNS, Name: "someone-elses",
		Annotations: map[string]string{routing.AnnotationDomain: "gone/go"}}
	g.Expect(k8sClient.Create(ctx, foreign)).To(Succeed())

	o := testOptions(srv)
	o.Ingress.Class = "nginx"
	o.Routes.Namespace = ingressNS
	start(t, newManager(t, cfg, o, nil))

	g.Eventually(ingressOf(ingressNS, "gone", "go"), timeout, poll).Should(BeNil())
	g.Consistently(func() error {
		return k8sClient.Get(ctx, client.ObjectKeyFromObject(foreign), &networkingv1.Ingress{})
	}, "1s", poll).Should(Succeed(), "an Ingress without kurz's label is left alone")
}

func TestNoIngressWithoutIngressClass(t *testing.T) {
	testenv.Need(t)
	g := NewWithT(t)
	srv := startControllers(t)
	ns, h := namespaceAndHost(t, "noclass")

	publishTXT(t, srv, ns, h)
	d := createDomain(g, ns, "go", h, verified)
	g.Consistently(func(g Gomega) []networkingv1.Ingress {
		var list networkingv1.IngressList
		g.Expect(k8sClient.List(ctx, &list, client.MatchingLabels{routing.LabelDomainNamespace: ns})).To(Succeed())
		return list.Items
	}, "1s", poll).Should(BeEmpty())
	g.Expect(tlsReadyOf(d)(g)).To(BeEmpty(), "no TLSReady condition when kurz does not manage routing")
	g.Expect(d.Status.TLS).To(BeNil())
}

// Options are validated before anything runs.
func TestIngressOptionsValidate(t *testing.T) {
	g := NewWithT(t)
	o := controllers.DefaultOptions()
	o.Ingress.Class = "nginx"
	o.Routes.Namespace = ""
	g.Expect(o.Validate()).To(MatchError(ContainSubstring("--route-namespace must be set")))
	o.Routes.Namespace = "kurz-system"
	g.Expect(o.Validate()).To(Succeed())
	o.Ingress.Class = "Not_A_Class"
	g.Expect(o.Validate()).To(MatchError(ContainSubstring("ingress-class")))
	o.Ingress.Class = "nginx"
	o.Routes.GracePeriod = -time.Second
	g.Expect(o.Validate()).To(MatchError(ContainSubstring("--route-grace-period")))
}

// An Ingress kurz does not own, with the name of a Domain's Ingress, is not
// taken over: TLSReady says what blocks the route, and once it is gone
// kurz creates its own.
func TestIngressNameTakenByAnother(t *testing.T) {
	testenv.Need(t)
	g := NewWithT(t)
	srv, ingressNS := startIngressControllers(t)
	ns, h := namespaceAndHost(t, "taken")

	foreign := routing.DesiredIngress(routing.IngressConfig{Class: "other", Namespace: ingressNS,
		Backend: routing.Backend{Service: "someone", PortNumber: 80}}, newDomain(ns, "go", h))
	foreign.Labels = nil
	g.Expect(k8sClient.Create(ctx, foreign)).To(Succeed())

	publishTXT(t, srv, ns, h)
	d := createDomain(g, ns, "go", h, verified)
	g.Eventually(func(g Gomega) string {
		g.Expect(tlsReadyOf(d)(g)).To(Equal("False/" + kurzv1alpha1.ReasonRoutePending))
		return meta.FindStatusCondition(d.Status.Conditions, kurzv1alpha1.ConditionTLSReady).Message
	}, timeout, poll).Should(ContainSubstring("is not kurz's"))
	g.Expect(ingressOf(ingressNS, ns, "go")(g).Spec.IngressClassName).To(Equal(ptr.To("other")), "left as it was")

	g.Expect(k8sClient.Delete(ctx, foreign)).To(Succeed())
	g.Eventually(func(g Gomega) *string {
		ing := ingressOf(ingressNS, ns, "go")(g)
		g.Expect(ing).NotTo(BeNil())
		return ing.Spec.IngressClassName
	}, timeout, poll).Should(Equal(ptr.To("nginx")))
}
