package fieldindex_test

import (
	"context"
	"maps"
	"strconv"
	"testing"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kurzv1alpha1 "github.com/kurz-dev/kurz/api/v1alpha1"
	"github.com/kurz-dev/kurz/internal/fieldindex"
)

// recorder is a FieldIndexer that keeps the extract functions.
type recorder map[string]client.IndexerFunc

func (r recorder) IndexField(_ context.Context, obj client.Object, field string, f client.IndexerFunc) error {
	r[kindOf(obj)+" "+field] = f
	return nil
}

func kindOf(obj client.Object) string {
	switch obj.(type) {
	case *kurzv1alpha1.Link:
		return "Link"
	case *kurzv1alpha1.Domain:
		return "Domain"
	}
	return "?"
}

func TestSetup(t *testing.T) {
	g := NewWithT(t)
	r := recorder{}
	g.Expect(fieldindex.Setup(context.Background(), r)).To(Succeed())

	link := &kurzv1alpha1.Link{
		ObjectMeta: metav1.ObjectMeta{UID: "u1"},
		Spec:       kurzv1alpha1.LinkSpec{Domain: "go.example", Key: "a/b"},
	}
	domain := &kurzv1alpha1.Domain{
		ObjectMeta: metav1.ObjectMeta{UID: "u2"},
		Spec:       kurzv1alpha1.DomainSpec{Domain: "go.example"},
	}
	tests := []struct {
		index string
		obj   client.Object
		want  string
	}{
		{"Domain " + fieldindex.Domain, domain, "go.example"},
		{"Link " + fieldindex.DomainKey, link, "go.example/35c1"},
	}
	g.Expect(r).To(HaveLen(len(tests)))
	for _, tt := range tests {
		t.Run(tt.index, func(t *testing.T) {
			g := NewWithT(t)
			g.Expect(r).To(HaveKey(tt.index))
			g.Expect(r[tt.index](tt.obj)).To(Equal([]string{tt.want}))
		})
	}
	g.Expect(fieldindex.DomainKeyOf("go.example", "a/b")).To(Equal("go.example/35c1"))
}

// informers is a FieldIndexer with informers, as the manager's cache is: the
// per-Link unique indexes go to the informer directly.
type informers struct {
	recorder
	added map[string]toolscache.Indexers // by kind
}

func (c informers) GetInformer(_ context.Context, obj client.Object, _ ...cache.InformerGetOption) (cache.Informer, error) {
	return indexerRecorder{added: c.added, kind: kindOf(obj)}, nil
}

// indexerRecorder embeds cache.Informer (nil): Setup must call nothing but
// AddIndexers, or the test panics.
type indexerRecorder struct {
	cache.Informer
	added map[string]toolscache.Indexers
	kind  string
}

func (r indexerRecorder) AddIndexers(ix toolscache.Indexers) error {
	if r.added[r.kind] == nil {
		r.added[r.kind] = toolscache.Indexers{}
	}
	maps.Copy(r.added[r.kind], ix)
	return nil
}

func TestSetupOnACacheIndexesUniqueValuesPerNamespaceOnly(t *testing.T) {
	g := NewWithT(t)
	c := informers{recorder: recorder{}, added: map[string]toolscache.Indexers{}}
	g.Expect(fieldindex.Setup(context.Background(), c)).To(Succeed())

	// Domains keep controller-runtime's index (namespaced and
	// cluster-wide); Links have one index, by domain and key, per
	// namespace only (no index by domain alone: Links.OnDomain reads the
	// domain's buckets).
	g.Expect(c.recorder).To(HaveKey("Domain " + fieldindex.Domain))
	g.Expect(c.recorder).NotTo(HaveKey("Link " + fieldindex.Domain))
	g.Expect(c.recorder).NotTo(HaveKey("Link " + fieldindex.DomainKey))
	g.Expect(c.added["Link"]).To(HaveLen(1))

	link := &kurzv1alpha1.Link{
		ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", UID: "u1"},
		Spec:       kurzv1alpha1.LinkSpec{Domain: "go.example", Key: "a/b"},
	}
	f := c.added["Link"]["field:"+fieldindex.DomainKey]
	g.Expect(f).NotTo(BeNil())
	g.Expect(f(link)).To(Equal([]string{"team-a/go.example/35c1"}))
	// The value built in one piece is the namespace before DomainKeyOf,
	// for buckets of one to four hexadecimal digits.
	digits := map[int]bool{}
	for i := range 5000 {
		link.Spec.Key = "k" + strconv.Itoa(i)
		want := fieldindex.DomainKeyOf("go.example", link.Spec.Key)
		digits[len(want)-len("go.example/")] = true
		g.Expect(f(link)).To(Equal([]string{"team-a/" + want}))
	}
	g.Expect(digits).To(HaveLen(4))
}

// indexedInformer is a Link informer whose store is a client-go indexer:
// Setup adds its indexes there, as on the manager's cache.
type indexedInformer struct {
	cache.Informer
	store toolscache.Indexer
}

func (i indexedInformer) AddIndexers(ix toolscache.Indexers) error { return i.store.AddIndexers(ix) }
func (i indexedInformer) GetIndexer() toolscache.Indexer           { return i.store }

// indexedCache hands out one indexedInformer (the test stores Links only).
type indexedCache struct {
	recorder
	informer indexedInformer
}

func (c indexedCache) GetInformer(context.Context, client.Object, ...cache.InformerGetOption) (cache.Informer, error) {
	return c.informer, nil
}

// TestLinksReadsTheIndexes: KeyPeers keeps the Links with the very key of
// its bucket, OnDomain the Links of the namespace on the domain.
func TestLinksReadsTheIndexes(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	// k569 and k1144 share a bucket; the other domain and namespace share the key.
	g.Expect(fieldindex.DomainKeyOf("go.example", "k569")).To(Equal(fieldindex.DomainKeyOf("go.example", "k1144")))
	c := indexedCache{recorder: recorder{}, informer: indexedInformer{
		store: toolscache.NewIndexer(toolscache.MetaNamespaceKeyFunc, toolscache.Indexers{}),
	}}
	g.Expect(fieldindex.Setup(ctx, c)).To(Succeed())
	for _, l := range []struct{ ns, name, domain, key string }{
		{"team-a", "a", "go.example", "k569"}, {"team-a", "b", "go.example", "k1144"},
		{"team-a", "c", "other.example", "k569"}, {"team-a", "d", "go.example", "k569"},
		{"team-b", "e", "go.example", "k569"},
		// The domain a prefix of another: its buckets are not this one's.
		{"team-a", "f", "go.example.org", "k569"}, {"team-a", "g", "go.exampl", "k1"},
	} {
		g.Expect(c.informer.store.Add(&kurzv1alpha1.Link{ObjectMeta: metav1.ObjectMeta{Name: l.name, Namespace: l.ns},
			Spec: kurzv1alpha1.LinkSpec{Domain: kurzv1alpha1.Hostname(l.domain), Key: l.key}})).To(Succeed())
	}
	links, err := fieldindex.NewLinks(ctx, c)
	g.Expect(err).NotTo(HaveOccurred())
	peers, err := links.KeyPeers("team-a", "go.example", "k569")
	g.Expect(err).NotTo(HaveOccurred())
	names := []string{}
	for _, l := range peers {
		names = append(names, l.Name)
	}
	g.Expect(names).To(ConsistOf("a", "d"))
	none, err := links.KeyPeers("team-c", "go.example", "k569")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(none).To(BeEmpty())

	g.Expect(links.OnDomain("team-a", "go.example")).To(ConsistOf("a", "b", "d"))
	g.Expect(links.OnDomain("team-a", "other.example")).To(ConsistOf("c"))
	g.Expect(links.OnDomain("team-b", "go.example")).To(ConsistOf("e"))
	g.Expect(links.OnDomain("team-b", "other.example")).To(BeEmpty())
}

// A cache whose informers have no indexer (not client-go's) is refused
// when the reconciler is built, not at the first lookup.
func TestNewLinksNeedsAnIndexer(t *testing.T) {
	g := NewWithT(t)
	_, err := fieldindex.NewLinks(context.Background(), informers{recorder: recorder{}, added: map[string]toolscache.Indexers{}})
	g.Expect(err).To(MatchError(ContainSubstring("has no indexer")))
}

// BenchmarkOnDomain: the Links of a domain among 100 000 in one namespace,
// read through the domain's key buckets (one Domain event's lookup).
func BenchmarkOnDomain(b *testing.B) {
	ctx := context.Background()
	c := indexedCache{recorder: recorder{}, informer: indexedInformer{
		store: toolscache.NewIndexer(toolscache.MetaNamespaceKeyFunc, toolscache.Indexers{}),
	}}
	if err := fieldindex.Setup(ctx, c); err != nil {
		b.Fatal(err)
	}
	for i := range 100000 {
		if err := c.informer.store.Add(&kurzv1alpha1.Link{ObjectMeta: metav1.ObjectMeta{Name: strconv.Itoa(i), Namespace: "team-a"},
			Spec: kurzv1alpha1.LinkSpec{Domain: "go.example", Key: "k" + strconv.Itoa(i)}}); err != nil {
			b.Fatal(err)
		}
	}
	links, err := fieldindex.NewLinks(ctx, c)
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		for _, domain := range []string{"go.example", "other.example"} {
			if _, err := links.OnDomain("team-a", domain); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// BenchmarkReplace: client-go's store taking 100 000 Links of one
// namespace and domain at once with the Link index, as a start's informer
// does after the watch-list's bookmark, on the path to the caches' sync.
func BenchmarkReplace(b *testing.B) {
	ctx := context.Background()
	links := make([]any, 100000)
	for i := range links {
		links[i] = &kurzv1alpha1.Link{ObjectMeta: metav1.ObjectMeta{Name: "link-" + strconv.Itoa(i), Namespace: "team-a"},
			Spec: kurzv1alpha1.LinkSpec{Domain: "go.example", Key: "k" + strconv.Itoa(i)}}
	}
	for b.Loop() {
		c := indexedCache{recorder: recorder{}, informer: indexedInformer{
			store: toolscache.NewIndexer(toolscache.MetaNamespaceKeyFunc, toolscache.Indexers{}),
		}}
		if err := fieldindex.Setup(ctx, c); err != nil {
			b.Fatal(err)
		}
		if err := c.informer.store.Replace(links, "1"); err != nil {
			b.Fatal(err)
		}
	}
}
