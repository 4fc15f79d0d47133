package fieldindex

import (
	"context"
	"fmt"

	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kurzv1alpha1 "github.com/kurz-dev/kurz/api/v1alpha1"
)

const (
	// Domain indexes Links and Domains by spec.domain: Domain changes reach
	// their Links, hostname claims and key conflicts are found without a scan.
	Domain = "spec.domain"
	// DomainKey indexes Links by "<spec.domain>/<spec.key>" (see
	// DomainKeyOf): key conflicts are found through it. The spec.domain
	// index alone would hand every check all links of a domain, quadratic
	// work when one domain holds many thousands of links.
	DomainKey = "spec.domain+key"
)

// DomainKeyOf is the DomainKey index value of a domain and key. A hostname
// has no '/', so the first one separates the two.
func DomainKeyOf(domain, key string) string { return domain + "/" + key }

// Setup registers the indexes with the manager's cache. Call it once, before
// the manager starts.
//
// Every Link has its own domain+key, so that index holds one set per Link.
// controller-runtime's IndexField stores each value twice (for namespaced
// and for cluster-wide queries); kurz queries it only within a namespace,
// so on a cache (anything with GetInformer) it is registered with the
// namespaced value alone, about 260 bytes less per Link. A cluster-wide
// query on it finds nothing. (There is no index by uid: the API finds
// objects by uid through its list index, internal/pagination.)
func Setup(ctx context.Context, indexer client.FieldIndexer) error {
	indexes := []struct {
		obj            client.Object
		field          string
		namespacedOnly bool
		extract        client.IndexerFunc
	}{
		{&kurzv1alpha1.Link{}, Domain, false, func(o client.Object) []string {
			return []string{string(o.(*kurzv1alpha1.Link).Spec.Domain)}
		}},
		{&kurzv1alpha1.Domain{}, Domain, false, func(o client.Object) []string {
			return []string{string(o.(*kurzv1alpha1.Domain).Spec.Domain)}
		}},
		{&kurzv1alpha1.Link{}, DomainKey, true, func(o client.Object) []string {
			l := o.(*kurzv1alpha1.Link)
			return []string{DomainKeyOf(string(l.Spec.Domain), l.Spec.Key)}
		}},
	}
	informers, hasInformers := indexer.(informerSource)
	for _, ix := range indexes {
		var err error
		if ix.namespacedOnly && hasInformers {
			err = indexNamespaced(ctx, informers, ix.obj, ix.field, ix.extract)
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
// copy "__all_namespaces/<value>".
func indexNamespaced(ctx context.Context, c informerSource, obj client.Object, field string, extract client.IndexerFunc) error {
	inf, err := c.GetInformer(ctx, obj)
	if err != nil {
		return err
	}
	return inf.AddIndexers(toolscache.Indexers{"field:" + field: func(o any) ([]string, error) {
		co, ok := o.(client.Object)
		if !ok {
			return nil, fmt.Errorf("object of type %T is not an Object", o)
		}
		vals := extract(co)
		out := make([]string, len(vals))
		for i, v := range vals {
			out[i] = co.GetNamespace() + "/" + v
		}
		return out, nil
	}})
}
