package controllers_test

import (
	"fmt"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kurzv1alpha1 "github.com/kurz-dev/kurz/api/v1alpha1"
	"github.com/kurz-dev/kurz/internal/parallel"
	"github.com/kurz-dev/kurz/internal/testenv"
)

// BenchmarkLinksReady creates KURZ_BENCH_LINKS links (default 10 000) on
// one verified Domain and reports the time from the first create until
// every link is Ready (s-to-ready, links/s; s-to-create is the creates
// alone), then counts the writes the settled links and their Domain receive
// during KURZ_BENCH_IDLE (default 60s): idle-writes/min, which must be 0. Run it with `make bench BENCH=LinksReady`; a quick run:
// `KURZ_BENCH_LINKS=1000 KURZ_BENCH_IDLE=5s make bench BENCH=LinksReady`.
func BenchmarkLinksReady(b *testing.B) {
	testenv.Need(b)
	n := envInt(b, "KURZ_BENCH_LINKS", 10000)
	idle := envDuration(b, "KURZ_BENCH_IDLE", time.Minute)

	// Like `kurz manager` (ctrl.GetConfig): no client-side rate limit.
	fast := rest.CopyConfig(cfg)
	fast.QPS, fast.Burst = -1, 0
	srv := newDNS(b)
	o := testOptions(srv)
	// The Domain is verified before the links arrive; after that its next
	// DNS check is an hour away, so the idle window sees steady state.
	o.DNSRecheckInterval = time.Hour
	mgr := newManager(b, fast, o, nil)
	start(b, mgr)
	creator, err := client.New(fast, client.Options{Scheme: scheme})
	if err != nil {
		b.Fatal(err)
	}

	for i := 0; i < b.N; i++ {
		ns := newNamespace(b, "bench")
		host := fmt.Sprintf("bench%d.test", i)
		d := newDomain(ns, "go", host)
		if err := creator.Create(ctx, d); err != nil {
			b.Fatal(err)
		}
		g := NewWithT(b)
		g.Eventually(readyOf(d), timeout, poll).Should(Equal(pending))
		srv.Set("_kurz-challenge."+host, dnsTypeTXT, d.Status.VerificationToken)
		g.Eventually(readyOf(d), timeout, poll).Should(Equal(verified))
		w := watchNamespace(b, mgr.GetCache(), ns, n)

		begin := time.Now()
		createLinks(b, creator, ns, host, n)
		created := time.Since(begin)
		select {
		case <-w.allReady:
		case <-time.After(15 * time.Minute):
			b.Fatalf("%d of %d links Ready after 15 minutes", w.readyCount(), n)
		}
		ready := time.Since(begin)

		// The idle window is the measurement itself: count every write
		// the settled objects receive while nothing happens.
		w.writes.Store(0)
		w.counting.Store(true)
		<-time.After(idle)
		w.counting.Store(false)

		b.ReportMetric(created.Seconds(), "s-to-create")
		b.ReportMetric(ready.Seconds(), "s-to-ready")
		b.ReportMetric(float64(n)/ready.Seconds(), "links/s")
		b.ReportMetric(float64(w.writes.Load())/idle.Minutes(), "idle-writes/min")

		if err := creator.DeleteAllOf(ctx, &kurzv1alpha1.Link{}, client.InNamespace(ns)); err != nil {
			b.Fatal(err)
		}
	}
}

// nsWatch follows the Links and Domains of one namespace in the manager's
// informers: which links are Ready, and how many writes arrive.
type nsWatch struct {
	mu       sync.Mutex
	ready    map[string]bool
	want     int
	allReady chan struct{}
	counting atomic.Bool
	writes   atomic.Int64
}

func (w *nsWatch) readyCount() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.ready)
}

// watchNamespace follows ns in the manager's informers. Every update of a
// Link or Domain is a write (the informers' resync is 10h away).
func watchNamespace(b *testing.B, c cache.Cache, ns string, want int) *nsWatch {
	w := &nsWatch{ready: make(map[string]bool, want), want: want, allReady: make(chan struct{})}
	onLink := func(obj any) {
		l, ok := obj.(*kurzv1alpha1.Link)
		if !ok || l.Namespace != ns || !meta.IsStatusConditionTrue(l.Status.Conditions, kurzv1alpha1.ConditionReady) {
			return
		}
		w.mu.Lock()
		defer w.mu.Unlock()
		if !w.ready[l.Name] {
			w.ready[l.Name] = true
			if len(w.ready) == w.want {
				close(w.allReady)
			}
		}
	}
	countWrite := func(obj any) {
		if o, ok := obj.(client.Object); ok && o.GetNamespace() == ns && w.counting.Load() {
			w.writes.Add(1)
		}
	}
	for _, obj := range []client.Object{&kurzv1alpha1.Link{}, &kurzv1alpha1.Domain{}} {
		inf, err := c.GetInformer(ctx, obj)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
			AddFunc: onLink,
			UpdateFunc: func(_, obj any) {
				countWrite(obj)
				onLink(obj)
			},
		}); err != nil {
			b.Fatal(err)
		}
	}
	return w
}

// createLinks creates n links on host in ns from 16 goroutines.
func createLinks(b *testing.B, c client.Client, ns, host string, n int) {
	if err := parallel.Each(ctx, 0, n, 16, func(i int) error {
		return c.Create(ctx, newLink(ns, fmt.Sprintf("l-%06d", i), host, fmt.Sprintf("k%06d", i)))
	}); err != nil {
		b.Fatalf("create links: %v", err)
	}
}

// envInt is the positive integer in environment variable name, def when
// it is unset.
func envInt(b *testing.B, name string, def int) int {
	return envPositive(b, name, def, strconv.Atoi, "integer")
}

// envDuration is the positive duration in environment variable name, def
// when it is unset.
func envDuration(b *testing.B, name string, def time.Duration) time.Duration {
	return envPositive(b, name, def, time.ParseDuration, "duration")
}

// envPositive parses environment variable name, a positive what, with
// parse; def when it is unset.
func envPositive[T int | time.Duration](b *testing.B, name string, def T, parse func(string) (T, error), what string) T {
	s := os.Getenv(name)
	if s == "" {
		return def
	}
	v, err := parse(s)
	if err != nil || v <= 0 {
		b.Fatalf("%s=%q: want a positive %s", name, s, what)
	}
	return v
}
