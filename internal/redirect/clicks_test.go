package redirect

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kurzv1alpha1 "github.com/kurz-dev/kurz/api/v1alpha1"
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
	g := NewWithT(t)
	ns, _ := oneLink(t, "final.test", nil)
	o := testOptions()
	o.ClickFlushInterval = time.Hour // only the final flush writes
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
	g := NewWithT(t)
	ns := newNamespace(t)
	createDomain(t, ns, "d", "finalmany.test", nil)
	const links = 300
	for i := range links {
		createLink(t, ns, fmt.Sprintf("l%d", i), "finalmany.test", fmt.Sprintf("k%d", i), "https://dest.example/", nil)
	}
	o := testOptions()
	o.ClickFlushInterval = time.Hour // only the final flush writes
	o.ClickFlushQPS = 5
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
	failuresBefore := counterValue(flushFailures)
	hammer(t, ts.base, "outage.test", "/k", 20)
	g.Eventually(func() float64 { return counterValue(flushFailures) }, 30*time.Second).Should(BeNumerically(">", failuresBefore))
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

// flakyStatus wraps a client so the next status patch fails as a timeout
// would, after (applied) or without reaching the API server.
type flakyStatus struct {
	client.Client
	mu            sync.Mutex
	fail, applied bool
}

func (f *flakyStatus) failNext(applied bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.fail, f.applied = true, applied
}

func (f *flakyStatus) Status() client.SubResourceWriter {
	return flakyWriter{f.Client.Status(), f}
}

type flakyWriter struct {
	client.SubResourceWriter
	f *flakyStatus
}

func (w flakyWriter) Patch(ctx context.Context, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
	w.f.mu.Lock()
	fail, applied := w.f.fail, w.f.applied
	w.f.fail = false
	w.f.mu.Unlock()
	if !fail {
		return w.SubResourceWriter.Patch(ctx, obj, patch, opts...)
	}
	if applied {
		if err := w.SubResourceWriter.Patch(ctx, obj, patch, opts...); err != nil {
			return err
		}
	}
	return &url.Error{Op: "Patch", URL: "https://kube-apiserver/", Err: context.DeadlineExceeded}
}

// TestUnknownOutcomeNotCountedTwice: a click patch that timed out after the
// API server applied it is not added again by the next flush; one that never
// arrived is.
func TestUnknownOutcomeNotCountedTwice(t *testing.T) {
	ctx := context.Background()
	ns := newNamespace(t)
	for _, tt := range []struct {
		name    string
		applied bool
	}{{"applied", true}, {"not applied", false}} {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			name := strings.ReplaceAll(tt.name, " ", "-")
			l := createLink(t, ns, name, "unsure.test", name, "https://dest.example/", nil)
			// A status write by someone else (a controller) between the two
			// flushes changes resourceVersion, not the clicks.
			q := &clickQueue{}
			c := &counter{uid: l.UID, namespace: ns, name: name, q: q}
			flaky := &flakyStatus{Client: k8s}
			f := newFlusher(q, flaky, k8s, 100)

			for range 3 {
				c.click(time.Now().UnixNano())
			}
			flaky.failNext(tt.applied)
			_, failed := f.flush(ctx, false)
			g.Expect(failed).To(Equal(1))
			want := int64(0)
			if tt.applied {
				want = 3
			}
			g.Expect(clicksOf(t, ns, name)).To(Equal(want))

			g.Expect(k8s.Get(ctx, keyOf(ns, name), l)).To(Succeed())
			l.Status.ObservedGeneration = 1
			g.Expect(k8s.Status().Update(ctx, l)).To(Succeed())

			_, failed = f.flush(ctx, false) // no new clicks: only settles
			g.Expect(failed).To(BeZero())
			g.Expect(clicksOf(t, ns, name)).To(Equal(int64(3)))

			c.click(time.Now().UnixNano())
			c.click(time.Now().UnixNano())
			_, failed = f.flush(ctx, false)
			g.Expect(failed).To(BeZero())
			g.Expect(clicksOf(t, ns, name)).To(Equal(int64(5)))
			g.Expect(f.unsure).To(BeEmpty())
		})
	}
}
