package controllers_test

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/kurz-dev/kurz/controllers"
	"github.com/kurz-dev/kurz/internal/fieldindex"
	"github.com/kurz-dev/kurz/internal/testenv"
)

// TestTermsRemoveTheirEventHandlers runs 20 leader terms as
// internal/manager does (a fresh set of controllers from New on the
// manager's shared informers, stopped when the term ends) and counts the
// event handlers registered on those informers: after the 20th term as
// many as after the first (none), and as many goroutines. Otherwise every
// Link and Domain event would run each term's predicates and mapping
// functions, one more copy per lost and regained Lease.
func TestTermsRemoveTheirEventHandlers(t *testing.T) {
	testenv.Need(t)
	g := NewWithT(t)
	handlers := &handlerCount{regs: map[toolscache.ResourceEventHandlerRegistration]bool{}}
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:                 scheme,
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		NewCache: func(c *rest.Config, o cache.Options) (cache.Cache, error) {
			inner, err := cache.New(c, o)
			return countingCache{Cache: inner, n: handlers}, err
		},
	})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(fieldindex.Setup(ctx, mgr.GetFieldIndexer())).To(Succeed())
	start(t, mgr)
	srv := newDNS(t)
	ns := newNamespace(t, "terms")

	var afterOne, goroutinesAfterOne int
	for term := 1; term <= 20; term++ {
		runTerm(t, mgr, testOptions(srv), ns, term)
		if term == 1 {
			afterOne = handlers.registered()
			g.Eventually(handlers.registered, timeout, poll).Should(Equal(afterOne))
			goroutinesAfterOne = settledGoroutines(g)
			t.Logf("after one term: %d handlers, %d goroutines", afterOne, goroutinesAfterOne)
		}
	}
	g.Expect(handlers.added()).To(BeNumerically(">=", 20*5), "every term registered its handlers")
	g.Eventually(handlers.registered, timeout, poll).Should(Equal(afterOne), "handlers after 20 terms")
	after := settledGoroutines(g)
	t.Logf("after 20 terms: %d handlers (%d added in all), %d goroutines", handlers.registered(), handlers.added(), after)
	// A few goroutines of the client's connections come and go; a term's
	// handlers alone are two each (client-go's processorListener).
	g.Expect(after).To(BeNumerically("<=", goroutinesAfterOne+5), "goroutines after 20 terms")
}

// runTerm runs one term: New's controllers until they have reconciled a
// Domain and a Link of their own, then stops them and waits for them.
func runTerm(t *testing.T, mgr ctrl.Manager, o controllers.Options, ns string, term int) {
	t.Helper()
	g := NewWithT(t)
	runnables, err := controllers.New(mgr, o)
	g.Expect(err).NotTo(HaveOccurred())
	termCtx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	for _, r := range runnables {
		wg.Go(func() {
			if err := r.Start(termCtx); err != nil {
				t.Errorf("term %d: %v", term, err)
			}
		})
	}
	h := host(t, fmt.Sprintf("term%d.test", term))
	d, l := newDomain(ns, fmt.Sprintf("d%d", term), h), newLink(ns, fmt.Sprintf("l%d", term), h, "k")
	g.Expect(k8sClient.Create(ctx, d)).To(Succeed())
	g.Expect(k8sClient.Create(ctx, l)).To(Succeed())
	g.Eventually(readyOf(d), timeout, poll).Should(Equal(pending))
	g.Eventually(readyOf(l), timeout, poll).Should(Equal(linkActive))
	cancel()
	wg.Wait()
}

// settledGoroutines returns the number of goroutines once it stops
// falling (stopped controllers' goroutines take a moment to return).
func settledGoroutines(g Gomega) int {
	n := runtime.NumGoroutine()
	g.Eventually(func() bool {
		last := n
		time.Sleep(200 * time.Millisecond)
		n = runtime.NumGoroutine()
		return n >= last
	}, timeout, poll).Should(BeTrue())
	return n
}

// handlerCount is the event handlers registered on the informers of a
// countingCache: client-go has no public count.
type handlerCount struct {
	mu    sync.Mutex
	regs  map[toolscache.ResourceEventHandlerRegistration]bool
	total int
}

func (h *handlerCount) add(r toolscache.ResourceEventHandlerRegistration, err error) (toolscache.ResourceEventHandlerRegistration, error) {
	if err == nil {
		h.mu.Lock()
		h.regs[r] = true
		h.total++
		h.mu.Unlock()
	}
	return r, err
}

func (h *handlerCount) registered() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.regs)
}

func (h *handlerCount) added() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.total
}

// countingCache hands out informers that count their handlers.
type countingCache struct {
	cache.Cache
	n *handlerCount
}

func (c countingCache) GetInformer(ctx context.Context, obj client.Object, opts ...cache.InformerGetOption) (cache.Informer, error) {
	inf, err := c.Cache.GetInformer(ctx, obj, opts...)
	if err != nil {
		return nil, err
	}
	return countingInformer{Informer: inf, n: c.n}, nil
}

func (c countingCache) GetInformerForKind(ctx context.Context, gvk schema.GroupVersionKind, opts ...cache.InformerGetOption) (cache.Informer, error) {
	inf, err := c.Cache.GetInformerForKind(ctx, gvk, opts...)
	if err != nil {
		return nil, err
	}
	return countingInformer{Informer: inf, n: c.n}, nil
}

type countingInformer struct {
	cache.Informer
	n *handlerCount
}

func (i countingInformer) AddEventHandler(h toolscache.ResourceEventHandler) (toolscache.ResourceEventHandlerRegistration, error) {
	return i.n.add(i.Informer.AddEventHandler(h))
}

func (i countingInformer) AddEventHandlerWithResyncPeriod(h toolscache.ResourceEventHandler, p time.Duration) (toolscache.ResourceEventHandlerRegistration, error) {
	return i.n.add(i.Informer.AddEventHandlerWithResyncPeriod(h, p))
}

func (i countingInformer) AddEventHandlerWithOptions(h toolscache.ResourceEventHandler, o toolscache.HandlerOptions) (toolscache.ResourceEventHandlerRegistration, error) {
	return i.n.add(i.Informer.AddEventHandlerWithOptions(h, o))
}

func (i countingInformer) RemoveEventHandler(r toolscache.ResourceEventHandlerRegistration) error {
	err := i.Informer.RemoveEventHandler(r)
	if err == nil {
		i.n.mu.Lock()
		delete(i.n.regs, r)
		i.n.mu.Unlock()
	}
	return err
}

// GetIndexer is the informer's, which the Link index reads
// (fieldindex.NewLinks).
func (i countingInformer) GetIndexer() toolscache.Indexer {
	return i.Informer.(interface{ GetIndexer() toolscache.Indexer }).GetIndexer()
}
