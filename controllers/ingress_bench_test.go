package controllers_test

import (
	"fmt"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kurzv1alpha1 "github.com/kurz-dev/kurz/api/v1alpha1"
	"github.com/kurz-dev/kurz/internal/routing"
	"github.com/kurz-dev/kurz/internal/testenv"
)

// BenchmarkIngresses creates KURZ_BENCH_DOMAINS Domains (default 200), each
// proven by a CNAME to the redirect target, and reports the time from the
// first create until every one has its Ingress and a TLSReady condition
// (s-to-ingress, domains/s); then the writes the settled Domains and
// Ingresses receive during KURZ_BENCH_IDLE (default 10s): idle-writes, which
// must be 0 (the Domain and Ingress controllers share the Domain's
// conditions and must not wake each other). `make bench BENCH=Ingresses`.
func BenchmarkIngresses(b *testing.B) {
	testenv.Need(b)
	n := envInt(b, "KURZ_BENCH_DOMAINS", 200)
	idle := envDuration(b, "KURZ_BENCH_IDLE", 10*time.Second)
	fast := rest.CopyConfig(cfg)
	fast.QPS, fast.Burst = -1, 0
	srv := newDNS(b)
	ingressNS := newNamespace(b, "kurz-bench-ing")
	o := testOptions(srv)
	o.DNSRecheckInterval = time.Hour
	o.Ingress.Class = "nginx"
	o.Routes.Namespace = ingressNS
	o.Ingress.Annotations = map[string]string{"cert-manager.io/cluster-issuer": "letsencrypt"}
	start(b, newManager(b, fast, o, nil))
	creator, err := client.New(fast, client.Options{Scheme: scheme})
	if err != nil {
		b.Fatal(err)
	}

	for i := 0; i < b.N; i++ {
		g := NewWithT(b)
		ns := newNamespace(b, "bench-ing")
		begin := time.Now()
		for j := range n {
			// One zone per hostname: DNS checks of one zone run one at a time.
			h := fmt.Sprintf("go.d%d-r%d-%s.test", j, i, ns)
			srv.Set(h, dnsTypeCNAME, targetHost+".")
			if err := creator.Create(ctx, newDomain(ns, fmt.Sprintf("d%d", j), h)); err != nil {
				b.Fatal(err)
			}
		}
		settled := func(g Gomega) {
			var ings networkingv1.IngressList
			g.Expect(creator.List(ctx, &ings, client.InNamespace(ingressNS),
				client.MatchingLabels{routing.LabelDomainNamespace: ns})).To(Succeed())
			g.Expect(ings.Items).To(HaveLen(n))
			var ds kurzv1alpha1.DomainList
			g.Expect(creator.List(ctx, &ds, client.InNamespace(ns))).To(Succeed())
			for _, d := range ds.Items {
				c := meta.FindStatusCondition(d.Status.Conditions, kurzv1alpha1.ConditionTLSReady)
				g.Expect(c).NotTo(BeNil())
				g.Expect(c.Reason).To(Equal(kurzv1alpha1.ReasonSecretMissing))
			}
		}
		g.Eventually(settled, 15*time.Minute, 200*time.Millisecond).Should(Succeed())
		took := time.Since(begin)

		versions := func() map[string]string {
			out := map[string]string{}
			var ings networkingv1.IngressList
			var ds kurzv1alpha1.DomainList
			g.Expect(creator.List(ctx, &ings, client.InNamespace(ingressNS), client.MatchingLabels{routing.LabelDomainNamespace: ns})).To(Succeed())
			g.Expect(creator.List(ctx, &ds, client.InNamespace(ns))).To(Succeed())
			for _, x := range ings.Items {
				out["ingress/"+x.Name] = x.ResourceVersion
			}
			for _, x := range ds.Items {
				out["domain/"+x.Name] = x.ResourceVersion
			}
			return out
		}
		before := versions()
		<-time.After(idle)
		after := versions()
		changed := 0
		for k, v := range before {
			if after[k] != v {
				changed++
			}
		}
		b.ReportMetric(took.Seconds(), "s-to-ingress")
		b.ReportMetric(float64(n)/took.Seconds(), "domains/s")
		b.ReportMetric(float64(changed), "idle-writes")
	}
}
