package restapi

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	kurzv1alpha1 "github.com/kurz-dev/kurz/api/v1alpha1"
	"github.com/kurz-dev/kurz/internal/fieldindex"
	"github.com/kurz-dev/kurz/internal/pagination"
	kurzscheme "github.com/kurz-dev/kurz/internal/scheme"
)

// The benchmarks serve requests through the real handler (middleware, auth
// cache, field-index look-ups, pagination index, JSON) with benchLinks
// links in a real controller-runtime informer cache. The cache is filled
// from an in-memory ListerWatcher instead of kube-apiserver: creating
// 100 000 objects in etcd would take minutes and gigabytes in
// kube-apiserver, and is not what is measured. Each b.N iteration serves
// benchBatch requests, so even `make bench` (-benchtime 1x) yields
// percentiles over enough samples.
const (
	benchLinks = 100_000
	benchBatch = 2000
	benchNS    = "bench"
	benchToken = "bench.token.jwt"
)

var (
	benchOnce    sync.Once
	benchHandler http.Handler
	benchIDs     []string
	benchErr     error
)

func benchServer(b *testing.B) (http.Handler, []string) {
	b.Helper()
	benchOnce.Do(func() { benchHandler, benchIDs, benchErr = newBenchServer() })
	if benchErr != nil {
		b.Fatal(benchErr)
	}
	return benchHandler, benchIDs
}

// staticListerWatcher lists fixed objects and never sends a watch event.
type staticListerWatcher struct{ list runtime.Object }

func (s staticListerWatcher) List(metav1.ListOptions) (runtime.Object, error) {
	return s.list.DeepCopyObject(), nil
}
func (s staticListerWatcher) Watch(metav1.ListOptions) (watch.Interface, error) {
	return watch.NewFake(), nil
}

// IsWatchListSemanticsUnSupported makes the reflector list, instead of
// streaming the initial objects over a watch that this fake never sends.
func (s staticListerWatcher) IsWatchListSemanticsUnSupported() bool { return true }

func newBenchServer() (http.Handler, []string, error) {
	logf.SetLogger(logr.Discard())
	scheme := kurzscheme.Scheme
	mapper := meta.NewDefaultRESTMapper(nil)
	mapper.Add(kurzv1alpha1.GroupVersion.WithKind("Link"), meta.RESTScopeNamespace)
	mapper.Add(kurzv1alpha1.GroupVersion.WithKind("Domain"), meta.RESTScopeNamespace)
	mapper.Add(corev1.SchemeGroupVersion.WithKind("Namespace"), meta.RESTScopeRoot)

	host := "go.example.com"
	links := &kurzv1alpha1.LinkList{Items: make([]kurzv1alpha1.Link, benchLinks)}
	ids := make([]string, benchLinks)
	start := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := range links.Items {
		created := metav1.NewMicroTime(start.Add(time.Duration(i) * time.Second))
		ids[i] = fmt.Sprintf("00000000-0000-4000-8000-%012d", i)
		links.Items[i] = kurzv1alpha1.Link{
			ObjectMeta: metav1.ObjectMeta{
				Namespace: benchNS, Name: fmt.Sprintf("k%d-abcde", i), UID: types.UID(ids[i]),
				ResourceVersion: fmt.Sprint(i + 10), Generation: 1, CreationTimestamp: metav1.NewTime(created.Time),
			},
			Spec: kurzv1alpha1.LinkSpec{
				Domain: kurzv1alpha1.Hostname(host), Key: fmt.Sprintf("k%d", i),
				URL:  kurzv1alpha1.URL(fmt.Sprintf("https://shop.example.com/products/%d?ref=campaign", i)),
				Tags: []string{"sale", "2025"},
			},
			Status: kurzv1alpha1.LinkStatus{Clicks: int64(i), CreatedAt: &created, UpdatedAt: &created, UpdatedGeneration: 1},
		}
	}
	lists := map[string]runtime.Object{
		"Link":      links,
		"Domain":    &kurzv1alpha1.DomainList{Items: []kurzv1alpha1.Domain{{ObjectMeta: metav1.ObjectMeta{Namespace: benchNS, Name: host, UID: "d1", ResourceVersion: "2"}, Spec: kurzv1alpha1.DomainSpec{Domain: kurzv1alpha1.Hostname(host)}}}},
		"Namespace": &corev1.NamespaceList{Items: []corev1.Namespace{{ObjectMeta: metav1.ObjectMeta{Name: benchNS, UID: "ns1", ResourceVersion: "1"}}}},
	}

	cfg := &rest.Config{Host: "http://127.0.0.1:1"} // never called
	c, err := cache.New(cfg, cache.Options{
		Scheme: scheme, Mapper: mapper,
		DefaultTransform: cache.TransformStripManagedFields(),
		NewInformer: func(_ toolscache.ListerWatcher, obj runtime.Object, resync time.Duration, ix toolscache.Indexers) toolscache.SharedIndexInformer {
			gvks, _, _ := scheme.ObjectKinds(obj)
			return toolscache.NewSharedIndexInformer(staticListerWatcher{list: lists[gvks[0].Kind]}, obj, resync, ix)
		},
	})
	if err != nil {
		return nil, nil, err
	}
	ctx := context.Background()
	if err := fieldindex.Setup(ctx, c); err != nil {
		return nil, nil, err
	}
	cl, err := client.New(cfg, client.Options{Scheme: scheme, Mapper: mapper, Cache: &client.CacheOptions{Reader: c}})
	if err != nil {
		return nil, nil, err
	}
	o := DefaultOptions()
	o.AuthCacheTTL = time.Hour
	o.RateLimit = 0
	cachedLinks, err := fieldindex.NewLinks(ctx, c)
	if err != nil {
		return nil, nil, err
	}
	s := newServer(cl, cl, cachedLinks, o)
	for _, obj := range []client.Object{&kurzv1alpha1.Link{}, &kurzv1alpha1.Domain{}, &corev1.Namespace{}} {
		inf, err := c.GetInformer(ctx, obj)
		if err != nil {
			return nil, nil, err
		}
		switch obj.(type) {
		case *kurzv1alpha1.Link:
			err = pagination.Register(inf, pagination.Sink[*kurzv1alpha1.Link](s.linkQuery), s.links.index)
		case *kurzv1alpha1.Domain:
			err = s.domains.index.Register(inf)
		}
		if err != nil {
			return nil, nil, err
		}
	}
	go func() { _ = c.Start(ctx) }()
	if !c.WaitForCacheSync(ctx) {
		return nil, nil, fmt.Errorf("cache did not sync")
	}
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(10 * time.Millisecond) {
		if _, total := s.links.index.Page(benchNS, 0, 1); total == benchLinks {
			break
		}
		if time.Now().After(deadline) {
			return nil, nil, fmt.Errorf("index did not fill")
		}
	}

	// The token is known and allowed, as after its first request.
	key := hashToken(benchToken)
	s.auth.identities.Add(key, &caller{
		user:      authenticationv1.UserInfo{Username: "system:serviceaccount:" + benchNS + ":bench", UID: "bench"},
		workspace: benchNS, tokenKey: key, limitKey: "uid:bench",
	})
	for _, verb := range []string{"get", "list"} {
		s.auth.decisions.Add(key+"/"+verb+"/links", true)
	}
	return s.handler(), ids, nil
}

// serveBatch serves benchBatch requests made by next and reports the
// latency percentiles.
func serveBatch(b *testing.B, h http.Handler, method string, next func(i int) string) {
	b.Helper()
	lat := make([]time.Duration, 0, b.N*benchBatch)
	b.ResetTimer()
	for n := 0; n < b.N; n++ {
		for i := range benchBatch {
			req := httptest.NewRequest(method, next(n*benchBatch+i), nil)
			req.Header.Set("Authorization", "Bearer "+benchToken)
			rec := httptest.NewRecorder()
			t0 := time.Now()
			h.ServeHTTP(rec, req)
			lat = append(lat, time.Since(t0))
			if rec.Code != http.StatusOK {
				b.Fatalf("%s %s: %d %s", method, req.URL, rec.Code, rec.Body.String())
			}
		}
	}
	b.StopTimer()
	slices.Sort(lat)
	pct := func(p float64) float64 { return float64(lat[int(p*float64(len(lat)-1))].Nanoseconds()) / 1e3 }
	b.ReportMetric(pct(0.50), "p50-µs")
	b.ReportMetric(pct(0.99), "p99-µs")
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(len(lat)), "ns/req")
}

func BenchmarkShowLink(b *testing.B) {
	h, ids := benchServer(b)
	rng := rand.New(rand.NewPCG(1, 2))
	serveBatch(b, h, "GET", func(int) string { return "/api/v1/links/" + ids[rng.IntN(len(ids))] })
}

func BenchmarkListPage(b *testing.B) {
	h, _ := benchServer(b)
	rng := rand.New(rand.NewPCG(3, 4))
	pages := benchLinks / pagination.PerPage
	serveBatch(b, h, "GET", func(int) string { return fmt.Sprintf("/api/v1/links?page=%d", 1+rng.IntN(pages)) })
}

func BenchmarkQRCodeCached(b *testing.B) {
	h, ids := benchServer(b)
	serveBatch(b, h, "PUT", func(int) string { return "/api/v1/links/" + ids[0] + "/qr-code" })
}

func BenchmarkQRCodeUncached(b *testing.B) {
	h, ids := benchServer(b)
	// A new colour every time: every request renders.
	serveBatch(b, h, "PUT", func(i int) string {
		return fmt.Sprintf("/api/v1/links/%s/qr-code?color=%%23%06x", ids[1], (i*7919)%0xffffff)
	})
}
