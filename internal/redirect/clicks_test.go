package redirect

import (
	"context"
	"fmt"
	"net/http"
	"path/filepath"
	"sync"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kurzv1alpha1 "github.com/kurz-dev/kurz/api/v1alpha1"
	"github.com/kurz-dev/kurz/internal/testenv"
	"github.com/kurz-dev/kurz/internal/testenv/apiproxy"
)

func clicksOf(t *testing.T, ns, name string) int64 {
	t.Helper()
	var l kurzv1alpha1.Link
	NewWithT(t).Expect(k8s.Get(context.Background(), keyOf(ns, name), &l)).To(Succeed())
	return l.Status.Clicks
}

// hammer sends n GETs from a few goroutines and expects each to redirect.
func hammer(t *testing.T, base, host, path string, n int) {
	t.Helper()
	var wg sync.WaitGroup
	const workers = 4
	for w := range workers {
		wg.Go(func() {
			for i := w; i < n; i += workers {
				NewWithT(t).Expect(do(t, "GET", base, host, path, nil).status).To(Equal(http.StatusFound))
			}
		})
	}
	wg.Wait()
}

func TestClicksFromTwoReplicas(t *testing.T) {
	testenv.Need(t)
	g := NewWithT(t)
	ctx := context.Background()
	ns, l := oneLink(t, "clicks.test", nil)
	// A status field the controllers own: a click flush must leave it alone.
	l.Status.ShortURL = "https://clicks.test/k"
	l.Status.ObservedGeneration = 1
	g.Expect(k8s.Status().Update(ctx, l)).To(Succeed())

	a, b := startServer(t, testOptions()), startServer(t, testOptions())
	for _, ts := range []*testServer{a, b} {
		g.Eventually(func() int { return do(t, "HEAD", ts.base, "clicks.test", "/k", nil).status }, 30*time.Second).Should(Equal(http.StatusFound))
	}
	const perReplica = 200
	var wg sync.WaitGroup
	for _, ts := range []*testServer{a, b} {
		wg.Go(func() { hammer(t, ts.base, "clicks.test", "/k", perReplica) })
	}
	wg.Wait()
	g.Eventually(func() int64 { return clicksOf(t, ns, "l") }, 30*time.Second).Should(Equal(int64(2 * perReplica)))
	g.Consistently(func() int64 { return clicksOf(t, ns, "l") }, time.Second).Should(Equal(int64(2 * perReplica)))

	g.Expect(k8s.Get(ctx, keyOf(ns, "l"), l)).To(Succeed())
	g.Expect(l.Status.LastClickTime).NotTo(BeNil())
	g.Expect(l.Status.LastClickTime.Time).To(BeTemporally("~", time.Now(), time.Minute))
	g.Expect(l.Status.ShortURL).To(Equal("https://clicks.test/k"))
	g.Expect(l.Status.ObservedGeneration).To(Equal(int64(1)))
}

func TestFinalFlushOnShutdown(t *testing.T) {
	testenv.Need(t)
	g := NewWithT(t)
	ns, _ := oneLink(t, "final.test", nil)
	o := testOptions()
	o.Clicks.FlushInterval = time.Hour // only the final flush writes
	ts := startServer(t, o)
	g.Eventually(func() int { return do(t, "HEAD", ts.base, "final.test", "/k", nil).status }, 30*time.Second).Should(Equal(http.StatusFound))
	hammer(t, ts.base, "final.test", "/k", 7)
	g.Expect(clicksOf(t, ns, "l")).To(BeZero())
	ts.stop() // returns once the manager (and so the final flush) is done
	g.Expect(clicksOf(t, ns, "l")).To(Equal(int64(7)))
}

// TestFinalFlushManyLinks: the final flush writes every clicked link, however
// low --click-flush-qps is; the QPS limiter would have let only about
// burst+qps*timeout of them through before the deadline.
func TestFinalFlushManyLinks(t *testing.T) {
	testenv.Need(t)
	g := NewWithT(t)
	ns := newNamespace(t)
	createDomain(t, ns, "d", "finalmany.test", nil)
	const links = 300
	for i := range links {
		createLink(t, ns, fmt.Sprintf("l%d", i), "finalmany.test", fmt.Sprintf("k%d", i), "https://dest.example/", nil)
	}
	o := testOptions()
	o.Clicks.FlushInterval = time.Hour // only the final flush writes
	o.Clicks.FlushQPS = 5
	o.ShutdownTimeout = 15 * time.Second // 5 + 5*15 = 80 links at 5 QPS
	ts := startServer(t, o)
	last := fmt.Sprintf("/k%d", links-1)
	g.Eventually(func() int { return do(t, "HEAD", ts.base, "finalmany.test", last, nil).status }, 30*time.Second).Should(Equal(http.StatusFound))
	for i := range links {
		g.Expect(do(t, "GET", ts.base, "finalmany.test", fmt.Sprintf("/k%d", i), nil).status).To(Equal(http.StatusFound))
	}
	ts.stop() // returns once the manager (and so the final flush) is done

	var list kurzv1alpha1.LinkList
	g.Expect(k8s.List(context.Background(), &list, client.InNamespace(ns))).To(Succeed())
	g.Expect(list.Items).To(HaveLen(links))
	unwritten := 0
	for _, l := range list.Items {
		if l.Status.Clicks != 1 {
			unwritten++
		}
	}
	g.Expect(unwritten).To(BeZero(), "links whose click the final flush lost")
}

func TestAPIServerOutage(t *testing.T) {
	testenv.Need(t)
	g := NewWithT(t)
	ns, _ := oneLink(t, "outage.test", nil)
	ts := startServer(t, testOptions())
	g.Eventually(func() int { return do(t, "GET", ts.base, "outage.test", "/k", nil).status }, 30*time.Second).Should(Equal(http.StatusFound))
	g.Eventually(func() int64 { return clicksOf(t, ns, "l") }, 30*time.Second).Should(Equal(int64(1)))

	g.Expect(env.ControlPlane.APIServer.Stop()).To(Succeed())
	restarted := false
	defer func() {
		if !restarted {
			_ = env.ControlPlane.APIServer.Start()
		}
	}()
	// Redirects keep working from memory; clicks pile up, at least one flush
	// fails meanwhile.
	failuresBefore := flushFailures(g)
	hammer(t, ts.base, "outage.test", "/k", 20)
	g.Eventually(func() float64 { return flushFailures(g) }, 30*time.Second).Should(BeNumerically(">", failuresBefore))
	hammer(t, ts.base, "outage.test", "/k", 20)

	g.Expect(env.ControlPlane.APIServer.Start()).To(Succeed())
	restarted = true
	g.Eventually(func() int64 {
		var l kurzv1alpha1.Link
		if err := k8s.Get(context.Background(), keyOf(ns, "l"), &l); err != nil {
			return -1
		}
		return l.Status.Clicks
	}, 60*time.Second, 200*time.Millisecond).Should(Equal(int64(41)))
	g.Consistently(func() int64 { return clicksOf(t, ns, "l") }, time.Second).Should(Equal(int64(41)))
}

// TestTwoReplicasFrozenAPIServer: two replicas click one Link while the API
// server takes their patches without answering; when it resumes it applies
// one and rejects the other (same resourceVersion). Both settle, and the
// Link ends with exactly the clicks made.
func TestTwoReplicasFrozenAPIServer(t *testing.T) {
	testenv.Need(t)
	g := NewWithT(t)
	ns, frozenHost := namespaceWithDomain(t, "frozen.test")
	createLink(t, ns, "l", frozenHost, "k", "https://dest.example/", nil)
	pa, pb := apiproxy.New(t, cfg), apiproxy.New(t, cfg)
	o := testOptions()
	a, b := startServerOn(t, pa.Config(), o), startServerOn(t, pb.Config(), o)
	for _, ts := range []*testServer{a, b} {
		g.Eventually(func() int { return do(t, "HEAD", ts.base, frozenHost, "/k", nil).status }, 30*time.Second).Should(Equal(http.StatusFound))
	}
	pa.SetMode(apiproxy.Hold)
	pb.SetMode(apiproxy.Hold)
	hammer(t, a.base, frozenHost, "/k", 30)
	hammer(t, b.base, frozenHost, "/k", 20)
	g.Eventually(pa.Parked, 30*time.Second).Should(BeNumerically(">", 0))
	g.Eventually(pb.Parked, 30*time.Second).Should(BeNumerically(">", 0))
	hammer(t, a.base, frozenHost, "/k", 10) // counted while frozen, written later

	// Resume: the parked patches arrive, in whatever order; the replicas
	// settle theirs and write the rest.
	codes := append(pa.Release(t), pb.Release(t)...)
	g.Expect(codes).To(ContainElement(http.StatusOK))
	pa.SetMode(apiproxy.Pass)
	pb.SetMode(apiproxy.Pass)
	g.Eventually(func() int64 { return clicksOf(t, ns, "l") }, 30*time.Second).Should(Equal(int64(60)))
	// Patches parked after the release (resends, new writes) arrive too late.
	for _, code := range append(pa.Release(t), pb.Release(t)...) {
		g.Expect(code).To(Equal(http.StatusConflict))
	}
	g.Consistently(func() int64 { return clicksOf(t, ns, "l") }, 2*time.Second).Should(Equal(int64(60)))
	var l kurzv1alpha1.Link
	g.Expect(k8s.Get(context.Background(), keyOf(ns, "l"), &l)).To(Succeed())
	g.Expect(l.Status.ClickWriters).To(HaveLen(2))
}

// TestClicksSpooledAcrossARestart: the server runs the click Writer's
// lifecycle around serving. A replica stopped while kube-apiserver is
// unreachable spools its clicks once it drained, and the next start
// replays them before it serves: each is counted once. (Package clicks
// tests the spool itself.)
func TestClicksSpooledAcrossARestart(t *testing.T) {
	testenv.Need(t)
	g := NewWithT(t)
	ns, host := twoLinks(t, "restart.test")
	p := apiproxy.New(t, cfg)
	o := testOptions()
	o.Clicks.FlushInterval = time.Hour // only the final flush writes
	o.Clicks.Spool = filepath.Join(t.TempDir(), "clicks.spool")
	o.ShutdownTimeout = 3 * time.Second
	a := startServerOn(t, p.Config(), o)
	for _, k := range []string{"k1", "k2"} {
		g.Eventually(func() int { return do(t, "HEAD", a.base, host, "/"+k, nil).status }, 30*time.Second).Should(Equal(http.StatusFound))
	}
	hammer(t, a.base, host, "/k1", 5)
	hammer(t, a.base, host, "/k2", 3)

	p.SetMode(apiproxy.Down)
	a.stop()
	g.Expect(o.Clicks.Spool).To(BeAnExistingFile(), "spooled")
	g.Expect(twoLinksClicks(t, ns)()).To(Equal([]int64{0, 0}))

	o.Clicks.FlushInterval = 200 * time.Millisecond
	startServer(t, o) // replays
	g.Eventually(twoLinksClicks(t, ns), 30*time.Second).Should(Equal([]int64{5, 3}))
	g.Eventually(func() string { return o.Clicks.Spool }, 30*time.Second).ShouldNot(BeAnExistingFile())
	g.Consistently(twoLinksClicks(t, ns), time.Second).Should(Equal([]int64{5, 3}))
}
