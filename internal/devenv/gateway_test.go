package devenv_test

import (
	"context"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	mdns "github.com/miekg/dns"
	. "github.com/onsi/gomega"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	kurzv1alpha1 "github.com/kurz-dev/kurz/api/v1alpha1"
	"github.com/kurz-dev/kurz/internal/dns/dnstest"
)

// kurz dev --gateway-class on a control plane without the Gateway API:
// it installs the standard channel, and a verified Domain gets its
// HTTPRoute and a listener in kurz's Gateway (namespace default).
func TestDevGatewayClass(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	dataDir := filepath.Join(t.TempDir(), "data")
	t.Cleanup(func() { killControlPlane(dataDir) })
	srv := dnstest.Start(t)
	srv.Set("lb.kurz.test", mdns.TypeA, "192.0.2.7")
	srv.Set("go.gw.test", mdns.TypeCNAME, "lb.kurz.test.")

	k := startKurzDev(t, dataDir, "--gateway-class", "example", "--dns-server", srv.Addr,
		"--redirect-target", "lb.kurz.test", "--gateway-annotation", "cert-manager.io/cluster-issuer=letsencrypt")
	k.waitBanner(g)
	g.Expect(k.out.String()).To(ContainSubstring("Gateway API CRDs (standard channel) installed"))

	admin := adminClient(g, dataDir)
	var crd apiextensionsv1.CustomResourceDefinition
	g.Expect(admin.Get(ctx, client.ObjectKey{Name: "listenersets.gateway.networking.k8s.io"}, &crd)).To(Succeed())
	g.Expect(crd.Annotations).To(HaveKeyWithValue("gateway.networking.k8s.io/bundle-version", "v1.6.3"))

	g.Expect(admin.Create(ctx, &kurzv1alpha1.Domain{
		ObjectMeta: metav1.ObjectMeta{Name: "go", Namespace: "default"},
		Spec:       kurzv1alpha1.DomainSpec{Domain: "go.gw.test"},
	})).To(Succeed())
	g.Eventually(func(g Gomega) map[string]string {
		var gw gatewayv1.Gateway
		g.Expect(admin.Get(ctx, client.ObjectKey{Namespace: "default", Name: "kurz-0"}, &gw)).To(Succeed())
		g.Expect(gw.Annotations).To(HaveKeyWithValue("cert-manager.io/cluster-issuer", "letsencrypt"))
		out := map[string]string{}
		for _, l := range gw.Spec.Listeners {
			if l.Hostname != nil {
				out[string(l.Name)] = string(*l.Hostname)
			}
		}
		return out
	}).WithTimeout(time.Minute).Should(Equal(map[string]string{"https-go.gw.test": "go.gw.test"}))
	var route gatewayv1.HTTPRoute
	g.Expect(admin.Get(ctx, client.ObjectKey{Namespace: "default", Name: "kurz-default.go"}, &route)).To(Succeed())

	k.signal(g, syscall.SIGTERM)
	g.Expect(k.exitCode(g)).To(Equal(0), k.out.String())
}
