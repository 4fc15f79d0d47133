package gauges

import (
	"context"
	"fmt"
	"runtime"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	toolscache "k8s.io/client-go/tools/cache"

	kurzv1alpha1 "github.com/kurz-dev/kurz/api/v1alpha1"
)

// informerOf runs a client-go informer over objects listed from memory
// (no kube-apiserver: what is measured is the collector, not the watch)
// until it has synced.
func informerOf(t *testing.T, obj, list kruntime.Object) toolscache.SharedIndexInformer {
	t.Helper()
	lw := &toolscache.ListWatch{
		ListWithContextFunc: func(context.Context, metav1.ListOptions) (kruntime.Object, error) { return list, nil },
		WatchFuncWithContext: func(context.Context, metav1.ListOptions) (watch.Interface, error) {
			return watch.NewFake(), nil
		},
	}
	inf := toolscache.NewSharedIndexInformer(listOnly{lw}, obj, 0, toolscache.Indexers{})
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	go inf.RunWithContext(ctx)
	if !toolscache.WaitForCacheSync(ctx.Done(), inf.HasSynced) {
		t.Fatal("informer did not sync")
	}
	return inf
}

// listOnly lists and then watches, where client-go would otherwise ask the
// watch for the initial objects and wait for a bookmark it never gets.
type listOnly struct{ *toolscache.ListWatch }

func (listOnly) IsWatchListSemanticsUnSupported() bool { return true }

// TestCollectAllocatesNothingPerLink: a scrape of kurz_links must not
// allocate in proportion to the Links a replica holds. Listing the
// informer's store at each scrape did (16 bytes a Link, 320 KB here),
// which a settled replica then allocated at every scrape.
func TestCollectAllocatesNothingPerLink(t *testing.T) {
	const n = 20000
	links := &kurzv1alpha1.LinkList{ListMeta: metav1.ListMeta{ResourceVersion: "1"}}
	for i := range n {
		l := kurzv1alpha1.Link{ObjectMeta: metav1.ObjectMeta{Namespace: "ws", Name: fmt.Sprintf("link-%d", i), ResourceVersion: "1"}}
		if i%2 == 0 {
			l.Status.Conditions = []metav1.Condition{{Type: kurzv1alpha1.ConditionReady, Status: metav1.ConditionTrue, Reason: kurzv1alpha1.ReasonActive}}
		}
		links.Items = append(links.Items, l)
	}
	domains := &kurzv1alpha1.DomainList{ListMeta: metav1.ListMeta{ResourceVersion: "1"}}
	s, err := newSource(informerOf(t, &kurzv1alpha1.Link{}, links), informerOf(t, &kurzv1alpha1.Domain{}, domains))
	if err != nil {
		t.Fatal(err)
	}
	c := &objectCollector{sources: []*source{s}}
	// A handler added to a running informer is replayed what it holds.
	if !toolscache.WaitForCacheSync(t.Context().Done(), func() bool { return len(linkGauges(t, c)) > 0 }) {
		t.Fatal("the counts did not sync")
	}
	if got := linkGauges(t, c); got[StateNew] != n/2 || got[LinkActive] != n/2 {
		t.Fatalf("kurz_links = %v, want %d new and %d active", got, n/2, n/2)
	}

	const rounds = 20
	ch := make(chan prometheus.Metric, 64)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for range rounds {
		c.Collect(ch)
		for len(ch) > 0 {
			<-ch
		}
	}
	runtime.ReadMemStats(&after)
	perScrape := (after.TotalAlloc - before.TotalAlloc) / rounds
	// Twelve constant metrics and their labels: a few KB whatever n is.
	if perScrape > 16<<10 {
		t.Fatalf("a scrape of %d Links allocated %d bytes (%.1f per Link); want under 16 KiB", n, perScrape, float64(perScrape)/n)
	}
	t.Logf("a scrape of %d Links allocated %d bytes", n, perScrape)
}

// linkGauges collects c once and returns kurz_links by state.
func linkGauges(t *testing.T, c prometheus.Collector) map[string]float64 {
	t.Helper()
	ch := make(chan prometheus.Metric, 64)
	c.Collect(ch)
	close(ch)
	got := map[string]float64{}
	for m := range ch {
		if m.Desc() != linksDesc {
			continue
		}
		var pb dto.Metric
		if err := m.Write(&pb); err != nil {
			t.Fatal(err)
		}
		got[pb.GetLabel()[0].GetValue()] = pb.GetGauge().GetValue()
	}
	return got
}
