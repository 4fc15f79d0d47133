// Command bench-mem measures, in process, the heap a replica holds per Link
// once settled: N Links shaped as `make bench-scale` creates them and as
// kube-apiserver sends them after their first status write (managedFields,
// last-applied annotation, status), decoded one by one as watch events are
// (linkcodec's decoder), stored by a client-go informer with kurz's cache
// transform and field indexes, and fed to the redirect index, the API's
// list index and its link query index, as `kurz manager` wires them. No
// control plane: it takes seconds, not bench-scale's quarter of an hour,
// and reports live heap (after a GC), not RSS.
//
//	go run ./hack/bench-mem -n 100000 -heapprofile /tmp/heap.pprof
//	go tool pprof -sample_index=inuse_space -top /tmp/heap.pprof
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"time"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kurzv1alpha1 "github.com/kurz-dev/kurz/api/v1alpha1"
	"github.com/kurz-dev/kurz/internal/cacheslim"
	"github.com/kurz-dev/kurz/internal/fieldindex"
	"github.com/kurz-dev/kurz/internal/linkquery"
	"github.com/kurz-dev/kurz/internal/pagination"
	"github.com/kurz-dev/kurz/internal/redirect"
	"github.com/kurz-dev/kurz/internal/timestamps"
)

const (
	namespace = "kurz-workspace"
	host      = "bench.kurz.test"
)

func main() {
	n := flag.Int("n", 100000, "Links")
	heapProfile := flag.String("heapprofile", "", "write the settled heap profile here")
	lastApplied := flag.Bool("last-applied", true, "give each Link kubectl's last-applied annotation, as bench-scale does")
	gogc := flag.Int("gogc", 0, "GC percent while feeding and after (0: Go's default; kurz's is 50)")
	quiet := flag.Int("quiet-gc", 0, "with -rss: lower the GC percent to this while quiet, as kurz does (internal/gctune; 0: off)")
	rss := flag.Duration("rss", 0, "after feeding, stay this long allocating -idle-alloc a second (a settled replica's leases, probes and scrapes) and print the RSS and the GC's CPU every 30 s")
	idleAlloc := flag.Int("idle-alloc", 100<<10, "bytes of garbage a second during -rss (an empty kurz replica allocates less than 100 KiB a second)")
	flag.Parse()
	if *gogc > 0 {
		debug.SetGCPercent(*gogc)
	}
	if *heapProfile != "" {
		// Every allocation sampled: the default rate (one per 512 KiB)
		// attributes the few large map arrays by chance.
		runtime.MemProfileRate = 1
	}

	base := heap()
	objs := make(chan watch.Event, 1024)
	inf := toolscache.NewSharedIndexInformer(&toolscache.ListWatch{
		ListWithContextFunc: func(context.Context, metav1.ListOptions) (k8sruntime.Object, error) {
			return &kurzv1alpha1.LinkList{ListMeta: metav1.ListMeta{ResourceVersion: "1"}}, nil
		},
		WatchFuncWithContext: func(context.Context, metav1.ListOptions) (watch.Interface, error) {
			return watch.NewProxyWatcher(objs), nil
		},
	}, &kurzv1alpha1.Link{}, 0, toolscache.Indexers{}) // no namespace index: see internal/manager's informersWith
	must(inf.SetTransform(cacheslim.Transform))
	ctx := context.Background()
	must(fieldindex.Setup(ctx, informers{inf}))

	rix := redirect.NewIndex()
	rix.UpsertDomain(domain())
	listIndex := pagination.NewIndex(timestamps.LinkCreated)
	query := linkquery.New(timestamps.LinkCreated, timestamps.LinkUpdated)
	_, err := inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc:    func(o any) { rix.UpsertLink(o.(*kurzv1alpha1.Link)) },
		UpdateFunc: func(_, o any) { rix.UpsertLink(o.(*kurzv1alpha1.Link)) },
	})
	must(err)
	must(pagination.Register(inf, nil, pagination.Sink[*kurzv1alpha1.Link](query), listIndex))
	// The controllers', webhooks' and analytics' handlers: each has its
	// own notification buffer.
	for range 3 {
		_, err := inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{})
		must(err)
	}
	go inf.Run(ctx.Done())

	start := time.Now()
	for i := range *n {
		objs <- watch.Event{Type: watch.Added, Object: decode(encode(i, *lastApplied))}
	}
	// The end of a watch list's initial events (client-go lists by
	// streaming, as against kube-apiserver).
	objs <- watch.Event{Type: watch.Bookmark, Object: &kurzv1alpha1.Link{ObjectMeta: metav1.ObjectMeta{
		ResourceVersion: fmt.Sprint(1000000 + 2**n), Annotations: map[string]string{metav1.InitialEventsAnnotationKey: "true"}}}}
	for len(inf.GetStore().ListKeys()) < *n || rix.Len() < *n {
		time.Sleep(50 * time.Millisecond)
	}
	// Let the handlers drain.
	time.Sleep(500 * time.Millisecond)
	live := heap() - base
	fmt.Printf("links %d (served %d), fed in %.1fs\n", *n, rix.Len(), time.Since(start).Seconds())
	fmt.Printf("live heap %.1f MB: %.0f B per link\n", float64(live)/1e6, float64(live)/float64(*n))
	if *heapProfile != "" {
		f, err := os.Create(*heapProfile)
		must(err)
		must(pprof.WriteHeapProfile(f))
		must(f.Close())
	}
	if *rss > 0 {
		idle(*rss, *gogc, *quiet, *idleAlloc)
	}
	runtime.KeepAlive(rix)
	runtime.KeepAlive(query)
	runtime.KeepAlive(listIndex)
}

// encode is Link i as kube-apiserver sends it once the controllers wrote
// its status: bench-scale's spec, kubectl's managedFields and annotation,
// kurz's status and its managedFields.
func encode(i int, lastApplied bool) []byte {
	src, campaign := "bench", "scale"
	created := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC).Add(time.Duration(i) * time.Millisecond)
	l := &kurzv1alpha1.Link{
		TypeMeta: metav1.TypeMeta{APIVersion: kurzv1alpha1.GroupVersion.String(), Kind: "Link"},
		ObjectMeta: metav1.ObjectMeta{
			Name: fmt.Sprintf("l%07d", i), Namespace: namespace,
			UID:             types.UID(fmt.Sprintf("0b6c1f9e-2f2c-4c1e-9a57-%012d", i)),
			ResourceVersion: fmt.Sprint(1000000 + 2*i), Generation: 1,
			CreationTimestamp: metav1.NewTime(created),
		},
		Spec: kurzv1alpha1.LinkSpec{
			Domain: host,
			Key:    fmt.Sprintf("k%d", i),
			URL:    kurzv1alpha1.URL(fmt.Sprintf("https://www.example.com/articles/%d/a-page-about-something?ref=newsletter", i)),
			UTM:    &kurzv1alpha1.LinkUTM{Source: &src, Campaign: &campaign},
		},
	}
	if lastApplied {
		b, _ := json.Marshal(l)
		l.Annotations = map[string]string{cacheslim.LastApplied: string(b) + "\n"}
	}
	fields := func(manager, sub, raw string) metav1.ManagedFieldsEntry {
		return metav1.ManagedFieldsEntry{Manager: manager, Operation: metav1.ManagedFieldsOperationUpdate,
			APIVersion: "kurz.dev/v1alpha1", Time: &metav1.Time{Time: created}, FieldsType: "FieldsV1",
			FieldsV1: metav1.NewFieldsV1(raw), Subresource: sub}
	}
	l.ManagedFields = []metav1.ManagedFieldsEntry{
		fields("kubectl-client-side-apply", "", `{"f:metadata":{"f:annotations":{".":{},"f:kubectl.kubernetes.io/last-applied-configuration":{}}},"f:spec":{".":{},"f:domain":{},"f:key":{},"f:url":{},"f:utm":{".":{},"f:campaign":{},"f:source":{}}}}`),
		fields("kurz", "status", `{"f:status":{".":{},"f:conditions":{".":{},"k:{\"type\":\"Ready\"}":{".":{},"f:lastTransitionTime":{},"f:message":{},"f:observedGeneration":{},"f:reason":{},"f:status":{},"f:type":{}}},"f:createdAt":{},"f:observedGeneration":{},"f:shortURL":{},"f:updatedAt":{},"f:updatedGeneration":{}}}`),
	}
	short := "https://" + host + "/" + l.Spec.Key
	at := metav1.NewMicroTime(created)
	l.Status = kurzv1alpha1.LinkStatus{
		ShortURL: short, CreatedAt: &at, UpdatedAt: &at, UpdatedGeneration: 1, ObservedGeneration: 1,
		Conditions: []metav1.Condition{{Type: kurzv1alpha1.ConditionReady, Status: metav1.ConditionTrue, ObservedGeneration: 1,
			LastTransitionTime: metav1.NewTime(created.Add(time.Minute)), Reason: kurzv1alpha1.ReasonActive, Message: "The link serves " + short}},
	}
	b, err := json.Marshal(l)
	must(err)
	return b
}

// decode is linkcodec's decoding of a watch event's object.
func decode(b []byte) *kurzv1alpha1.Link {
	l := &kurzv1alpha1.Link{}
	must(jsonv2.Unmarshal(b, l, jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true)))
	return l
}

func domain() *kurzv1alpha1.Domain {
	return &kurzv1alpha1.Domain{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: "bench", UID: "d", Generation: 1,
			CreationTimestamp: metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))},
		Spec: kurzv1alpha1.DomainSpec{Domain: host},
	}
}

// informers gives fieldindex.Setup the Link informer, as the manager's
// cache does.
type informers struct {
	inf toolscache.SharedIndexInformer
}

func (i informers) GetInformer(context.Context, client.Object, ...cache.InformerGetOption) (cache.Informer, error) { //nolint:unparam // the interface fieldindex.Setup takes
	return i.inf, nil
}

func (i informers) IndexField(context.Context, client.Object, string, client.IndexerFunc) error {
	return nil // Domains: not measured
}

func heap() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

func must(err error) {
	if err != nil {
		log.Fatal(err)
	}
}
