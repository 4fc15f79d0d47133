package fieldindex

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kurzv1alpha1 "github.com/kurz-dev/kurz/api/v1alpha1"
)

const (
	// Domain indexes Domains by spec.domain: hostname claims are found
	// without a scan. Links are not indexed by it (a set entry per Link, for
	// Domain events only): Links.OnDomain walks the domain's DomainKey
	// buckets instead.
	Domain = "spec.domain"
	// DomainKey indexes Links by spec.domain and a bucket of spec.key (see
	// DomainKeyOf); read it through Links.KeyPeers, which keeps the Links
	// with the very key. The spec.domain index alone would hand every check all
	// links of a domain, quadratic work when one domain holds many
	// thousands of links.
	DomainKey = "spec.domain+key"
)

// keyBuckets is how many DomainKey values one domain's keys spread over.
// client-go's indexer holds a set per value: one per key would be a map per
// Link (about 300 bytes each, the largest index cost per link), while a
// bucket holds about n/keyBuckets Links (6 at 100 000 links, 61 at
// 1 000 000), which Links.KeyPeers scans without copying them.
const keyBuckets = 1 << 14

// DomainKeyOf is the DomainKey index value of a domain and key:
// "<domain>/<bucket>", the bucket being the key's FNV-1a hash modulo
// keyBuckets, in hexadecimal. A hostname has no '/'.
func DomainKeyOf(domain, key string) string {
	return domainKey(false, "", domain, key)
}

// namespacedDomainKey is the value of a Link's DomainKey index on a cache
// (see indexNamespaced): "<namespace>/" + DomainKeyOf(domain, key).
func namespacedDomainKey(namespace, domain, key string) string {
	return domainKey(true, namespace, domain, key)
}

// domainKey builds DomainKeyOf(domain, key), after "<namespace>/" when
// namespaced, in one allocation: a start indexes every Link this way on
// its path to the caches' sync, where joining the parts one by one cost
// four allocations a Link (BenchmarkReplace).
func domainKey(namespaced bool, namespace, domain, key string) string {
	h := uint32(2166136261)
	for i := 0; i < len(key); i++ {
		h ^= uint32(key[i])
		h *= 16777619
	}
	var digits [4]byte // keyBuckets-1 has 4 hexadecimal digits
	bucket := strconv.AppendUint(digits[:0], uint64(h%keyBuckets), 16)
	var b strings.Builder
	b.Grow(len(namespace) + 1 + len(domain) + 1 + len(bucket))
	if namespaced {
		b.WriteString(namespace)
		b.WriteByte('/')
	}
	b.WriteString(domain)
	b.WriteByte('/')
	b.Write(bucket)
	return b.String()
}

// Links looks Links up in the Link informer's indexes, in place: a List
// through the cache copies every Link the index value holds into the list
// (shallow, 512 bytes each), which at a million links was almost half of
// what the controllers allocated while settling (key buckets of 61 Links,
// 31 KB per reconcile) and 500 MB for each Domain event that reconciles
// a hostname's Links.
type Links struct{ index toolscache.Indexer }

// NewLinks reads the indexes of c's Link informer. Setup must have
// registered them; c need not have started (NewLinks does not wait for
// the informer to sync).
func NewLinks(ctx context.Context, c informerSource) (*Links, error) {
	inf, err := c.GetInformer(ctx, &kurzv1alpha1.Link{}, cache.BlockUntilSynced(false))
	if err != nil {
		return nil, fmt.Errorf("the Link informer: %w", err)
	}
	ii, ok := inf.(interface{ GetIndexer() toolscache.Indexer })
	if !ok {
		return nil, fmt.Errorf("the Link informer (%T) has no indexer", inf)
	}
	return &Links{index: ii.GetIndexer()}, nil
}

// KeyPeers returns the Links of namespace with domain and key: shallow
// copies of the cached objects (no deep copy), so read them, never change
// them. It scans the key's bucket and copies only the Links with this very
// key.
func (ls *Links) KeyPeers(namespace, domain, key string) ([]kurzv1alpha1.Link, error) {
	var peers []kurzv1alpha1.Link
	err := ls.each(DomainKey, namespacedDomainKey(namespace, domain, key), func(l *kurzv1alpha1.Link) {
		if string(l.Spec.Domain) == domain && l.Spec.Key == key {
			peers = append(peers, *l)
		}
	})
	if err != nil {
		return nil, fmt.Errorf("list Links with key %s on %s: %w", key, domain, err)
	}
	return peers, nil
}

// OnDomain returns the names of the Links of namespace on domain. It
// looks up each of the domain's keyBuckets DomainKey values (a few
// milliseconds, for a Domain event) rather than keep an index by domain
// alone, whose set entry per Link would cost every replica about 35 bytes
// per Link for those rare events.
func (ls *Links) OnDomain(namespace, domain string) ([]string, error) {
	var names []string
	prefix := namespace + "/" + domain + "/"
	buf := make([]byte, 0, len(prefix)+4)
	for b := range uint64(keyBuckets) {
		buf = strconv.AppendUint(append(buf[:0], prefix...), b, 16)
		err := ls.each(DomainKey, string(buf), func(l *kurzv1alpha1.Link) {
			if string(l.Spec.Domain) == domain {
				names = append(names, l.Name)
			}
		})
		if err != nil {
			return nil, fmt.Errorf("list Links on %s: %w", domain, err)
		}
	}
	return names, nil
}

// All calls f with every cached Link, in no order: the cache's objects,
// read only. Unlike a List through the cache it copies none of them (a
// list of 100 000 Links is 51 MB of shallow copies).
func (ls *Links) All(f func(*kurzv1alpha1.Link)) {
	for _, o := range ls.index.List() {
		if l, ok := o.(*kurzv1alpha1.Link); ok {
			f(l)
		}
	}
}

// each calls f with the cached Links of the namespaced index value
// (registered by indexNamespaced).
func (ls *Links) each(field, value string, f func(*kurzv1alpha1.Link)) error {
	objs, err := ls.index.ByIndex("field:"+field, value)
	if err != nil {
		return err
	}
	for _, o := range objs {
		l, ok := o.(*kurzv1alpha1.Link)
		if !ok {
			return fmt.Errorf("the Link cache holds a %T", o)
		}
		f(l)
	}
	return nil
}

// Setup registers the indexes with the manager's cache. Call it once, before
// the manager starts.
//
// controller-runtime's IndexField stores each value twice, for namespaced
// and for cluster-wide queries: every Link would sit in two sets of each
// index. kurz looks Links up only within a namespace (by domain and key,
// whose index has a value per bucket of keys: DomainKeyOf; by domain
// through those buckets), so on a cache (anything with GetInformer) the
// Link index is registered with the namespaced value alone; a cluster-wide
// query on it finds nothing. Domains, few, are also looked up across
// namespaces. (There is no index by uid: the API finds objects by uid
// through its list index, internal/pagination.)
func Setup(ctx context.Context, indexer client.FieldIndexer) error {
	indexes := []struct {
		obj     client.Object
		field   string
		extract client.IndexerFunc
		// namespaced, when set, is the one value of obj on a cache,
		// namespace included: the index is then per namespace only.
		namespaced func(client.Object) string
	}{
		{&kurzv1alpha1.Domain{}, Domain, func(o client.Object) []string {
			return []string{string(o.(*kurzv1alpha1.Domain).Spec.Domain)}
		}, nil},
		{&kurzv1alpha1.Link{}, DomainKey, func(o client.Object) []string {
			l := o.(*kurzv1alpha1.Link)
			return []string{DomainKeyOf(string(l.Spec.Domain), l.Spec.Key)}
		}, func(o client.Object) string {
			l := o.(*kurzv1alpha1.Link)
			return namespacedDomainKey(l.Namespace, string(l.Spec.Domain), l.Spec.Key)
		}},
	}
	informers, hasInformers := indexer.(informerSource)
	for _, ix := range indexes {
		var err error
		if ix.namespaced != nil && hasInformers {
			err = indexNamespaced(ctx, informers, ix.obj, ix.field, ix.namespaced)
		} else {
			err = indexer.IndexField(ctx, ix.obj, ix.field, ix.extract)
		}
		if err != nil {
			return fmt.Errorf("index %T by %s: %w", ix.obj, ix.field, err)
		}
	}
	return nil
}

// informerSource is the part of a controller-runtime cache that
// indexNamespaced needs.
type informerSource interface {
	GetInformer(ctx context.Context, obj client.Object, opts ...cache.InformerGetOption) (cache.Informer, error)
}

// indexNamespaced registers field on obj's informer the way
// controller-runtime's IndexField does (index "field:<field>", values
// "<namespace>/<value>", which is what its cache reader looks up for
// client.InNamespace with client.MatchingFields), without the cluster-wide
// copy "__all_namespaces/<value>". value gives that namespaced value.
func indexNamespaced(ctx context.Context, c informerSource, obj client.Object, field string, value func(client.Object) string) error {
	inf, err := c.GetInformer(ctx, obj)
	if err != nil {
		return err
	}
	return inf.AddIndexers(toolscache.Indexers{"field:" + field: func(o any) ([]string, error) {
		co, ok := o.(client.Object)
		if !ok {
			return nil, fmt.Errorf("object of type %T is not an Object", o)
		}
		return []string{value(co)}, nil
	}})
}
