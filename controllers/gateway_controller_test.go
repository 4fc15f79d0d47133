package controllers_test

import (
	"fmt"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	kurzv1alpha1 "github.com/kurz-dev/kurz/api/v1alpha1"
	"github.com/kurz-dev/kurz/controllers"
	"github.com/kurz-dev/kurz/internal/dns/dnstest"
	"github.com/kurz-dev/kurz/internal/routing"
	"github.com/kurz-dev/kurz/internal/testenv"
)

// startGatewayControllers starts a DNS server (newDNS) and controllers
// that keep Gateways of class example (or, with shared set, ListenerSets on
// it) with a cert-manager annotation and an hour's grace period, in a
// namespace of their own; it returns the server and that namespace.
func startGatewayControllers(t *testing.T, shared *types.NamespacedName) (*dnstest.Server, string) {
	t.Helper()
	srv := newDNS(t)
	gwNS := newNamespace(t, "kurz-gw")
	o := testOptions(srv)
	if shared != nil {
		o.Gateway.Parent = *shared
	} else {
		o.Gateway.Class = "example"
	}
	o.Routes.Namespace = gwNS
	o.Routes.GracePeriod = time.Hour
	o.Gateway.Annotations = map[string]string{"cert-manager.io/cluster-issuer": "letsencrypt"}
	start(t, newManager(t, cfg, o, nil))
	return srv, gwNS
}

// routeOf fetches the HTTPRoute of Domain ns/name in gwNS (nil: none).
func routeOf(gwNS, ns, name string) func(Gomega) *gatewayv1.HTTPRoute {
	return objectOf[gatewayv1.HTTPRoute](gwNS, routing.RouteName(ns, name))
}

// gatewayOf fetches Gateway name in gwNS (nil: none).
func gatewayOf(gwNS, name string) func(Gomega) *gatewayv1.Gateway {
	return objectOf[gatewayv1.Gateway](gwNS, name)
}

// listenerHosts maps the Gateways (or ListenerSets) of gwNS to the
// hostnames of their HTTPS listeners.
func listenerHosts(gwNS string, listenerSets bool) func(Gomega) map[string][]string {
	return func(g Gomega) map[string][]string {
		out := map[string][]string{}
		add := func(name string, obj any) {
			for l, h := range routing.Listeners(obj) {
				if l != routing.HTTPListenerName {
					out[name] = append(out[name], h)
				}
			}
		}
		if listenerSets {
			var list gatewayv1.ListenerSetList
			g.Expect(k8sClient.List(ctx, &list, client.InNamespace(gwNS))).To(Succeed())
			for i := range list.Items {
				add(list.Items[i].Name, &list.Items[i])
			}
			return out
		}
		var list gatewayv1.GatewayList
		g.Expect(k8sClient.List(ctx, &list, client.InNamespace(gwNS))).To(Succeed())
		for i := range list.Items {
			add(list.Items[i].Name, &list.Items[i])
		}
		return out
	}
}

func TestGatewayFollowsDomain(t *testing.T) {
	testenv.Need(t)
	g := NewWithT(t)
	srv, gwNS := startGatewayControllers(t, nil)
	ns := newNamespace(t, "gw")
	hostA, hostB := host(t, "go.gw.test"), host(t, "links.gw.test")

	d := createDomain(g, ns, "go", hostA, pending)
	g.Eventually(tlsReadyOf(d), timeout, poll).Should(Equal("False/" + kurzv1alpha1.ReasonRoutePending))
	g.Expect(meta.FindStatusCondition(d.Status.Conditions, kurzv1alpha1.ConditionTLSReady).Message).To(ContainSubstring("No Gateway listener routes"))
	g.Expect(routeOf(gwNS, ns, "go")(g)).To(BeNil(), "no HTTPRoute before the Domain is verified")

	publishTXT(t, srv, ns, hostA)
	g.Eventually(tlsReadyOf(d), timeout, poll).Should(Equal("False/" + kurzv1alpha1.ReasonSecretMissing))
	listener := "https-" + hostA
	g.Expect(d.Status.TLS).To(Equal(&kurzv1alpha1.DomainTLS{
		HTTPRoute: routing.RouteName(ns, "go"), Gateway: gwNS + "/kurz-0", Listener: listener, SecretName: "kurz-tls-" + hostA,
	}))

	gw := gatewayOf(gwNS, "kurz-0")(g)
	g.Expect(gw).NotTo(BeNil())
	g.Expect(gw.Spec.GatewayClassName).To(Equal(gatewayv1.ObjectName("example")))
	g.Expect(gw.Labels).To(Equal(map[string]string{routing.LabelManagedBy: "kurz"}))
	g.Expect(gw.Annotations).To(Equal(map[string]string{"cert-manager.io/cluster-issuer": "letsencrypt"}))
	same := &gatewayv1.AllowedRoutes{Namespaces: &gatewayv1.RouteNamespaces{From: ptr.To(gatewayv1.NamespacesFromSame)}}
	g.Expect(gw.Spec.Listeners).To(Equal([]gatewayv1.Listener{
		{Name: "http", Port: 80, Protocol: gatewayv1.HTTPProtocolType, AllowedRoutes: same},
		{Name: gatewayv1.SectionName(listener), Hostname: ptr.To(gatewayv1.Hostname(hostA)), Port: 443, Protocol: gatewayv1.HTTPSProtocolType,
			TLS: &gatewayv1.ListenerTLSConfig{Mode: ptr.To(gatewayv1.TLSModeTerminate), CertificateRefs: []gatewayv1.SecretObjectReference{{
				Group: ptr.To(gatewayv1.Group("")), Kind: ptr.To(gatewayv1.Kind("Secret")), Name: gatewayv1.ObjectName("kurz-tls-" + hostA),
			}}},
			AllowedRoutes: same},
	}))

	r := routeOf(gwNS, ns, "go")(g)
	g.Expect(r).NotTo(BeNil())
	g.Expect(r.Labels).To(Equal(map[string]string{
		routing.LabelManagedBy:       "kurz",
		routing.LabelDomainNamespace: ns,
		routing.LabelDomainName:      "go",
		routing.LabelDomainUID:       string(d.UID),
	}))
	g.Expect(r.Annotations).To(Equal(map[string]string{routing.AnnotationDomain: ns + "/go"}))
	g.Expect(r.Spec.Hostnames).To(Equal([]gatewayv1.Hostname{gatewayv1.Hostname(hostA)}))
	ref := func(section string) gatewayv1.ParentReference {
		return gatewayv1.ParentReference{Group: ptr.To(gatewayv1.Group(gatewayv1.GroupName)), Kind: ptr.To(gatewayv1.Kind("Gateway")),
			Name: "kurz-0", SectionName: ptr.To(gatewayv1.SectionName(section))}
	}
	g.Expect(r.Spec.ParentRefs).To(Equal([]gatewayv1.ParentReference{ref("http"), ref(listener)}))
	g.Expect(r.Spec.Rules).To(HaveLen(1))
	g.Expect(r.Spec.Rules[0].Matches).To(Equal([]gatewayv1.HTTPRouteMatch{{Path: &gatewayv1.HTTPPathMatch{
		Type: ptr.To(gatewayv1.PathMatchPathPrefix), Value: ptr.To("/")}}}))
	g.Expect(r.Spec.Rules[0].BackendRefs).To(HaveLen(1))
	backend := r.Spec.Rules[0].BackendRefs[0]
	g.Expect(backend.Name).To(Equal(gatewayv1.ObjectName("kurz-redirect")))
	g.Expect(backend.Port).To(Equal(ptr.To(gatewayv1.PortNumber(80))))
	g.Expect(backend.Kind).To(Equal(ptr.To(gatewayv1.Kind("Service"))))

	// Settled objects are not rewritten.
	rv, gwRV := r.ResourceVersion, gw.ResourceVersion
	g.Consistently(func(g Gomega) []string {
		return []string{routeOf(gwNS, ns, "go")(g).ResourceVersion, gatewayOf(gwNS, "kurz-0")(g).ResourceVersion}
	}, "1s", poll).Should(Equal([]string{rv, gwRV}))

	// An edit to kurz's Gateway is reverted.
	gw.Spec.Listeners = gw.Spec.Listeners[:1]
	g.Expect(k8sClient.Update(ctx, gw)).To(Succeed())
	g.Eventually(listenerHosts(gwNS, false), timeout, poll).Should(Equal(map[string][]string{"kurz-0": {hostA}}))

	// Renamed: the route and the listener follow, in the same Gateway.
	publishTXT(t, srv, ns, hostB)
	setHostname(g, d, hostB)
	g.Eventually(listenerHosts(gwNS, false), timeout, poll).Should(Equal(map[string][]string{"kurz-0": {hostB}}))
	g.Eventually(func(g Gomega) []gatewayv1.ParentReference {
		r := routeOf(gwNS, ns, "go")(g)
		g.Expect(r.Spec.Hostnames).To(Equal([]gatewayv1.Hostname{gatewayv1.Hostname(hostB)}))
		return r.Spec.ParentRefs
	}, timeout, poll).Should(Equal([]gatewayv1.ParentReference{ref("http"), ref("https-" + hostB)}))
	g.Eventually(func(g Gomega) string {
		g.Expect(tlsReadyOf(d)(g)).To(Equal("False/" + kurzv1alpha1.ReasonSecretMissing))
		return d.Status.TLS.Listener
	}, timeout, poll).Should(Equal("https-" + hostB))

	// Deleted: the route goes, and the Gateway left empty with it.
	g.Expect(k8sClient.Delete(ctx, d)).To(Succeed())
	g.Eventually(routeOf(gwNS, ns, "go"), timeout, poll).Should(BeNil())
	g.Eventually(gatewayOf(gwNS, "kurz-0"), timeout, poll).Should(BeNil())
}

func TestGatewayOnlyForTheHostnameOwner(t *testing.T) {
	testenv.Need(t)
	g := NewWithT(t)
	srv, gwNS := startGatewayControllers(t, nil)
	nsA, nsB := newNamespace(t, "gwown-a"), newNamespace(t, "gwown-b")
	h := targetedHost(t, srv, "go.gwown.test")

	a := newDomain(nsA, "go", h)
	g.Expect(k8sClient.Create(ctx, a)).To(Succeed())
	g.Eventually(tlsReadyOf(a), timeout, poll).Should(Equal("False/" + kurzv1alpha1.ReasonSecretMissing))

	b := createDomain(g, nsB, "go", h, claimed)
	g.Eventually(tlsReadyOf(b), timeout, poll).Should(Equal("False/" + kurzv1alpha1.ReasonRoutePending))
	g.Expect(routeOf(gwNS, nsB, "go")(g)).To(BeNil(), "a Domain that does not hold its hostname gets no HTTPRoute")

	// B proves it by TXT: the hostname moves, A's route goes at once, and
	// the one listener of the hostname now serves B's route.
	publishTXT(t, srv, nsB, h)
	g.Eventually(tlsReadyOf(b), timeout, poll).Should(Equal("False/" + kurzv1alpha1.ReasonSecretMissing))
	g.Eventually(routeOf(gwNS, nsA, "go"), timeout, poll).Should(BeNil())
	g.Eventually(listenerHosts(gwNS, false), timeout, poll).Should(Equal(map[string][]string{"kurz-0": {h}}))
	g.Eventually(tlsReadyOf(a), timeout, poll).Should(Equal("False/" + kurzv1alpha1.ReasonRoutePending))
}

func TestGatewayKeptThroughGracePeriod(t *testing.T) {
	testenv.Need(t)
	g := NewWithT(t)
	srv, gwNS := startGatewayControllers(t, nil)
	ns, h := namespaceAndHost(t, "gwgrace")

	publishTXT(t, srv, ns, h)
	d := newDomain(ns, "go", h)
	g.Expect(k8sClient.Create(ctx, d)).To(Succeed())
	g.Eventually(tlsReadyOf(d), timeout, poll).Should(Equal("False/" + kurzv1alpha1.ReasonSecretMissing))

	// The record goes: the Domain drops to Pending, route and listener stay.
	srv.Set(kurzv1alpha1.ChallengeRecordPrefix+h, dnsTypeTXT)
	g.Eventually(readyOf(d), timeout, poll).Should(Equal(pending))
	g.Consistently(func(g Gomega) bool {
		return routeOf(gwNS, ns, "go")(g) != nil && len(listenerHosts(gwNS, false)(g)["kurz-0"]) == 1
	}, "2s", poll).Should(BeTrue())
	g.Expect(tlsReadyOf(d)(g)).To(Equal("False/"+kurzv1alpha1.ReasonSecretMissing), "TLSReady still describes the kept listener")

	g.Expect(k8sClient.Delete(ctx, d)).To(Succeed())
	g.Eventually(routeOf(gwNS, ns, "go"), timeout, poll).Should(BeNil())
	g.Eventually(gatewayOf(gwNS, "kurz-0"), timeout, poll).Should(BeNil())
}

// Left behind while kurz was down: a route of a deleted Domain and its
// listener go on start. Objects kurz does not own (a Gateway with the name
// kurz would pick, an HTTPRoute with a Domain's route name) are left alone,
// and TLSReady names the one in the way.
func TestGatewayOrphansAndForeignObjects(t *testing.T) {
	testenv.Need(t)
	g := NewWithT(t)
	srv := newDNS(t)
	gwNS := newNamespace(t, "kurz-gworph")
	c := routing.GatewayConfig{Class: "example", Namespace: gwNS, Backend: routing.Backend{Service: "kurz-redirect", PortNumber: 80}}
	orphanHost := host(t, "gone.gworph.test")

	orphan := routing.DesiredHTTPRoute(c, newDomain("gone", "go", orphanHost), "kurz-1")
	g.Expect(k8sClient.Create(ctx, orphan)).To(Succeed())
	g.Expect(k8sClient.Create(ctx, routing.DesiredGateway(c, "kurz-1", []string{orphanHost}))).To(Succeed())
	foreignGW := routing.DesiredGateway(c, "kurz-0", nil)
	foreignGW.Labels = nil
	g.Expect(k8sClient.Create(ctx, foreignGW)).To(Succeed())

	ns, h := namespaceAndHost(t, "gworph")
	foreignRoute := routing.DesiredHTTPRoute(c, newDomain(ns, "taken", h), "")
	foreignRoute.Labels = nil
	g.Expect(k8sClient.Create(ctx, foreignRoute)).To(Succeed())

	o := testOptions(srv)
	o.Gateway.Class = "example"
	o.Routes.Namespace = gwNS
	start(t, newManager(t, cfg, o, nil))

	g.Eventually(func() bool {
		return apierrors.IsNotFound(k8sClient.Get(ctx, client.ObjectKeyFromObject(orphan), &gatewayv1.HTTPRoute{}))
	}, timeout, poll).Should(BeTrue(), "the orphan route is removed")
	g.Eventually(gatewayOf(gwNS, "kurz-1"), timeout, poll).Should(BeNil(), "and its Gateway, left empty")

	// A Domain: its listener goes to a Gateway kurz owns, never into kurz-0.
	publishTXT(t, srv, ns, h)
	d := newDomain(ns, "go", h)
	g.Expect(k8sClient.Create(ctx, d)).To(Succeed())
	g.Eventually(listenerHosts(gwNS, false), timeout, poll).Should(Equal(map[string][]string{"kurz-1": {h}}))
	g.Expect(gatewayOf(gwNS, "kurz-0")(g).Labels).To(BeEmpty(), "the foreign Gateway is left as it was")

	// A Domain whose route name is taken.
	takenHost := host(t, "taken.gworph.test")
	taken := newDomain(ns, "taken", takenHost)
	publishTXT(t, srv, ns, takenHost)
	g.Expect(k8sClient.Create(ctx, taken)).To(Succeed())
	g.Eventually(func(g Gomega) string {
		g.Expect(tlsReadyOf(taken)(g)).To(Equal("False/" + kurzv1alpha1.ReasonRoutePending))
		return meta.FindStatusCondition(taken.Status.Conditions, kurzv1alpha1.ConditionTLSReady).Message
	}, timeout, poll).Should(ContainSubstring("HTTPRoute " + routing.RouteName(ns, "taken") + " in " + gwNS + " exists and is not kurz's"))
	g.Expect(routeOf(gwNS, ns, "taken")(g).Spec.Hostnames).To(Equal([]gatewayv1.Hostname{gatewayv1.Hostname(h)}), "left as it was")
}

// More hostnames than one Gateway holds: a second Gateway; a hostname keeps
// its Gateway while others come and go, and freed slots are filled again.
func TestGatewayMoreThan64Hostnames(t *testing.T) {
	testenv.Need(t)
	testManyHostnames(t, nil)
}

// The same with ListenerSets on a shared Gateway: 64 hostnames each.
func TestListenerSetsMoreThan64Hostnames(t *testing.T) {
	testenv.Need(t)
	testManyHostnames(t, &types.NamespacedName{Namespace: "infra", Name: "shared"})
}

func testManyHostnames(t *testing.T, shared *types.NamespacedName) {
	g := NewWithT(t)
	srv, gwNS := startGatewayControllers(t, shared)
	ns := newNamespace(t, "many")
	const n = 70
	capacity := routing.MaxListeners - 1
	if shared != nil {
		capacity = routing.MaxListeners
	}
	hosts := make([]string, n+3)
	domains := make([]*kurzv1alpha1.Domain, n+3)
	for i := range hosts {
		hosts[i] = targetedHost(t, srv, fmt.Sprintf("h%03d.many.test", i))
		domains[i] = newDomain(ns, fmt.Sprintf("h%03d", i), hosts[i])
	}
	for _, d := range domains[:n] {
		g.Expect(k8sClient.Create(ctx, d)).To(Succeed())
	}
	long := 3 * time.Minute
	g.Eventually(func(g Gomega) []int {
		m := listenerHosts(gwNS, shared != nil)(g)
		return []int{len(m["kurz-0"]), len(m["kurz-1"])}
	}, long, poll).Should(Equal([]int{capacity, n - capacity}))
	before := parentOfHost(listenerHosts(gwNS, shared != nil)(g))

	// Status names the listener's home.
	last := domains[n-1]
	g.Eventually(tlsReadyOf(last), long, poll).Should(Equal("False/" + kurzv1alpha1.ReasonSecretMissing))
	if shared != nil {
		g.Expect(last.Status.TLS.Gateway).To(Equal("infra/shared"))
		g.Expect(last.Status.TLS.ListenerSet).To(Equal(before[hosts[n-1]]))
		var ls gatewayv1.ListenerSet
		g.Expect(k8sClient.Get(ctx, types.NamespacedName{Namespace: gwNS, Name: "kurz-0"}, &ls)).To(Succeed())
		g.Expect(ls.Spec.ParentRef.Name).To(Equal(gatewayv1.ObjectName("shared")))
		g.Expect(ls.Spec.ParentRef.Namespace).To(Equal(ptr.To(gatewayv1.Namespace("infra"))))
		g.Expect(ls.Annotations).To(HaveKeyWithValue("cert-manager.io/cluster-issuer", "letsencrypt"))
		r := routeOf(gwNS, ns, last.Name)(g)
		g.Expect(r.Spec.ParentRefs).To(HaveLen(1), "a shared Gateway's HTTP listener is not kurz's")
		g.Expect(r.Spec.ParentRefs[0].Kind).To(Equal(ptr.To(gatewayv1.Kind("ListenerSet"))))
	} else {
		g.Expect(last.Status.TLS.Gateway).To(Equal(gwNS + "/" + before[hosts[n-1]]))
	}

	// Three of kurz-0's hostnames go, three new ones come: the others keep
	// their Gateway, the new ones take the freed slots of kurz-0.
	var gone []int
	for i := 0; i < n && len(gone) < 3; i++ {
		if before[hosts[i]] == "kurz-0" {
			gone = append(gone, i)
		}
	}
	for _, i := range gone {
		g.Expect(k8sClient.Delete(ctx, domains[i])).To(Succeed())
	}
	for _, d := range domains[n:] {
		g.Expect(k8sClient.Create(ctx, d)).To(Succeed())
	}
	g.Eventually(func(g Gomega) map[string]string {
		return parentOfHost(listenerHosts(gwNS, shared != nil)(g))
	}, long, poll).Should(SatisfyAll(
		HaveLen(n),
		WithTransform(func(m map[string]string) []string { return []string{m[hosts[n]], m[hosts[n+1]], m[hosts[n+2]]} },
			Equal([]string{"kurz-0", "kurz-0", "kurz-0"})),
	))
	after := parentOfHost(listenerHosts(gwNS, shared != nil)(g))
	for h, p := range before {
		if _, ok := after[h]; ok {
			g.Expect(after[h]).To(Equal(p), "%s kept its %s", h, p)
		}
	}
}

// parentOfHost inverts listenerHosts.
func parentOfHost(m map[string][]string) map[string]string {
	out := map[string]string{}
	for p, hosts := range m {
		for _, h := range hosts {
			out[h] = p
		}
	}
	return out
}

// One way of routing at a time, with a clear error.
func TestGatewayOptionsValidate(t *testing.T) {
	g := NewWithT(t)
	o := controllers.DefaultOptions()
	o.Routes.Namespace = "kurz-system"
	o.Gateway.Class = "example"
	g.Expect(o.Validate()).To(Succeed())
	o.Ingress.Class = "nginx"
	g.Expect(o.Validate()).To(MatchError(ContainSubstring("--ingress-class and --gateway-class/--gateway are exclusive")))
	o.Ingress.Class = ""
	o.Gateway.Parent = types.NamespacedName{Namespace: "infra", Name: "shared"}
	g.Expect(o.Validate()).To(MatchError(ContainSubstring("--gateway-class and --gateway are exclusive")))
	o.Gateway.Class = ""
	g.Expect(o.Validate()).To(Succeed())
	o.Routes.Namespace = ""
	g.Expect(o.Validate()).To(MatchError(ContainSubstring("--route-namespace must be set")))
}
