package fieldindex_test

import (
	"context"
	"maps"
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
		{"Link " + fieldindex.Domain, link, "go.example"},
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
	// cluster-wide); the indexes of Links are per namespace only.
	g.Expect(c.recorder).To(HaveKey("Domain " + fieldindex.Domain))
	g.Expect(c.recorder).NotTo(HaveKey("Link " + fieldindex.Domain))
	g.Expect(c.recorder).NotTo(HaveKey("Link " + fieldindex.DomainKey))
	g.Expect(c.added["Link"]["field:"+fieldindex.Domain](&kurzv1alpha1.Link{
		ObjectMeta: metav1.ObjectMeta{Namespace: "team-a"}, Spec: kurzv1alpha1.LinkSpec{Domain: "go.example"},
	})).To(Equal([]string{"team-a/go.example"}))

	link := &kurzv1alpha1.Link{
		ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", UID: "u1"},
		Spec:       kurzv1alpha1.LinkSpec{Domain: "go.example", Key: "a/b"},
	}
	f := c.added["Link"]["field:"+fieldindex.DomainKey]
	g.Expect(f).NotTo(BeNil())
	g.Expect(f(link)).To(Equal([]string{"team-a/go.example/35c1"}))
}

// bucketReader answers a DomainKey list with every Link it holds, as the
// index does for keys that share a bucket.
type bucketReader struct {
	client.Reader
	links []kurzv1alpha1.Link
}

func (r bucketReader) List(_ context.Context, list client.ObjectList, _ ...client.ListOption) error {
	list.(*kurzv1alpha1.LinkList).Items = append([]kurzv1alpha1.Link(nil), r.links...)
	return nil
}

func TestKeyPeersKeepsOnlyTheVeryKey(t *testing.T) {
	g := NewWithT(t)
	// k569 and k1144 share a bucket; the other domain shares the key.
	g.Expect(fieldindex.DomainKeyOf("go.example", "k569")).To(Equal(fieldindex.DomainKeyOf("go.example", "k1144")))
	link := func(name, domain, key string) kurzv1alpha1.Link {
		return kurzv1alpha1.Link{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "team-a"},
			Spec: kurzv1alpha1.LinkSpec{Domain: kurzv1alpha1.Hostname(domain), Key: key}}
	}
	r := bucketReader{links: []kurzv1alpha1.Link{
		link("a", "go.example", "k569"), link("b", "go.example", "k1144"),
		link("c", "other.example", "k569"), link("d", "go.example", "k569"),
	}}
	peers, err := fieldindex.KeyPeers(context.Background(), r, "team-a", "go.example", "k569")
	g.Expect(err).NotTo(HaveOccurred())
	names := []string{}
	for _, p := range peers {
		names = append(names, p.Name)
	}
	g.Expect(names).To(Equal([]string{"a", "d"}))
}
