package restapi

import (
	"context"
	"encoding/json"
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
	uidRand := rand.New(rand.NewPCG(7, 8))
	for i := range links.Items {
		created := metav1.NewMicroTime(start.Add(time.Duration(i) * time.Second))
		// Random version 4 UUIDs, as kube-apiserver gives.
		ids[i] = fmt.Sprintf("%08x-%04x-4%03x-%04x-%012x", uidRand.Uint32(), uidRand.IntN(1<<16), uidRand.IntN(1<<12), 0x8000|uidRand.IntN(1<<14), uidRand.Uint64()&(1<<48-1))
		l := kurzv1alpha1.Link{
			ObjectMeta: metav1.ObjectMeta{
				Namespace: benchNS, Name: fmt.Sprintf("k%d-abcde", i), UID: types.UID(ids[i]),
				ResourceVersion: fmt.Sprint(i + 10), Generation: 1, CreationTimestamp: metav1.NewTime(created.Time),
			},
			Spec: kurzv1alpha1.LinkSpec{
				Domain: kurzv1alpha1.Hostname(host), Key: fmt.Sprintf("k%d", i),
				URL: kurzv1alpha1.URL(fmt.Sprintf("https://shop.example.com/products/%d?ref=campaign", i)),
			},
			Status: kurzv1alpha1.LinkStatus{CreatedAt: &created, UpdatedAt: &created, UpdatedGeneration: 1},
		}
		// Half the links carry a tag of 20 (and "sale"), a tenth were
		// clicked, one in 50 expired and one in 50 lost a key conflict.
		if i%2 == 0 {
			l.Spec.Tags = []string{"sale", fmt.Sprintf("t%d", i/2%20)}
		}
		// The newest 1 000 also carry bench-tag, as make bench-scale tags
		// them before its tag=bench-tag figure.
		if i >= benchLinks-1000 {
			l.Spec.Tags = append(l.Spec.Tags, "bench-tag")
		}
		if i%10 == 0 {
			clicked := metav1.NewTime(start.Add(time.Duration(benchLinks+i) * time.Second))
			l.Status.Clicks, l.Status.LastClickTime = int64(i%997), &clicked
		}
		reason := kurzv1alpha1.ReasonActive
		switch i % 50 {
		case 1:
			reason = kurzv1alpha1.ReasonExpired
		case 2:
			reason = kurzv1alpha1.ReasonKeyConflict
		}
		l.Status.Conditions = []metav1.Condition{{Type: kurzv1alpha1.ConditionReady, Status: metav1.ConditionTrue, Reason: reason}}
		links.Items[i] = l
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
			err = pagination.Register(inf, nil, pagination.Sink[*kurzv1alpha1.Link](s.linkQuery), s.links.index)
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
	serveBatchOf(b, h, method, benchBatch, next)
}

// serveBatchOf serves batch requests a b.N iteration.
func serveBatchOf(b *testing.B, h http.Handler, method string, batch int, next func(i int) string) {
	b.Helper()
	lat := make([]time.Duration, 0, b.N*batch)
	b.ResetTimer()
	for n := 0; n < b.N; n++ {
		for i := range batch {
			req := httptest.NewRequest(method, next(n*batch+i), nil)
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

// BenchmarkListFiltered is a list page of the 100 000 links with each
// filter and sort: the first page and the last (of the result).
func BenchmarkListFiltered(b *testing.B) {
	h, _ := benchServer(b)
	for _, bc := range []struct{ name, query string }{
		{"sort=-created_at", "sort=-created_at"},
		{"sort=key", "sort=key"},
		{"sort=-key", "sort=-key"},
		{"sort=clicks", "sort=clicks"},
		{"sort=-clicks", "sort=-clicks"},
		{"sort=last_click", "sort=last_click"},
		{"sort=updated_at", "sort=updated_at"},
		{"tag", "tag=t3"},
		{"tag=bench-tag", "tag=bench-tag"},
		{"tag-all", "tag=t3&tag=sale&tag_mode=all"},
		{"exclude_tag+sort=key", "exclude_tag=sale&sort=key"},
		{"exclude_tag+sort=updated_at", "exclude_tag=sale&sort=updated_at"},
		{"domain", "domain=go.example.com"},
		{"state", "state=expired"},
		{"created_after", "created_after=2025-01-01T12:00:00Z"},
		{"last_click_before+sort", "last_click_before=2025-01-03&sort=last_click"},
		{"has_password", "has_password=false"},
		{"search-4", "search=4242"},
		{"search-4+sort=key", "search=4242&sort=key"},
	} {
		total := benchTotal(b, h, "/api/v1/links?"+bc.query)
		for _, page := range []struct {
			name string
			n    int
		}{{"first", 1}, {"last", max(1, (total+pagination.PerPage-1)/pagination.PerPage)}} {
			b.Run(bc.name+"/"+page.name, func(b *testing.B) {
				url := fmt.Sprintf("/api/v1/links?%s&page=%d", bc.query, page.n)
				serveBatchOf(b, h, "GET", 100, func(int) string { return url })
			})
		}
	}
}

// benchTotal is meta.total of a list.
func benchTotal(b *testing.B, h http.Handler, url string) int {
	b.Helper()
	req := httptest.NewRequest("GET", url, nil)
	req.Header.Set("Authorization", "Bearer "+benchToken)
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	var page struct {
		Meta struct {
			Total int `json:"total"`
		} `json:"meta"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &page); err != nil || rec.Code != http.StatusOK {
		b.Fatalf("%s: %d %s", url, rec.Code, rec.Body.String())
	}
	return page.Meta.Total
}

// BenchmarkLookup finds random links by domain and key, and by short URL.
func BenchmarkLookup(b *testing.B) {
	h, _ := benchServer(b)
	rng := rand.New(rand.NewPCG(5, 6))
	b.Run("domain+key", func(b *testing.B) {
		serveBatch(b, h, "GET", func(int) string {
			return fmt.Sprintf("/api/v1/links/lookup?domain=go.example.com&key=k%d", rng.IntN(benchLinks))
		})
	})
	b.Run("link", func(b *testing.B) {
		serveBatch(b, h, "GET", func(int) string {
			return fmt.Sprintf("/api/v1/links/lookup?link=https://go.example.com/k%d", rng.IntN(benchLinks))
		})
	})
}

// BenchmarkTags lists the workspace's 21 tags by count.
func BenchmarkTags(b *testing.B) {
	h, _ := benchServer(b)
	serveBatch(b, h, "GET", func(int) string { return "/api/v1/tags?sort=count" })
}
