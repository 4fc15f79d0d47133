package fieldindex

import (
	"context"
	"fmt"

	"sigs.k8s.io/controller-runtime/pkg/client"

	kurzv1alpha1 "github.com/kurz-dev/kurz/api/v1alpha1"
)

const (
	// UID indexes Links and Domains by metadata.uid: API ids are object uids.
	UID = "metadata.uid"
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
func Setup(ctx context.Context, indexer client.FieldIndexer) error {
	indexes := []struct {
		obj     client.Object
		field   string
		extract client.IndexerFunc
	}{
		{&kurzv1alpha1.Link{}, UID, uidOf},
		{&kurzv1alpha1.Domain{}, UID, uidOf},
		{&kurzv1alpha1.Link{}, Domain, func(o client.Object) []string {
			return []string{string(o.(*kurzv1alpha1.Link).Spec.Domain)}
		}},
		{&kurzv1alpha1.Domain{}, Domain, func(o client.Object) []string {
			return []string{string(o.(*kurzv1alpha1.Domain).Spec.Domain)}
		}},
		{&kurzv1alpha1.Link{}, DomainKey, func(o client.Object) []string {
			l := o.(*kurzv1alpha1.Link)
			return []string{DomainKeyOf(string(l.Spec.Domain), l.Spec.Key)}
		}},
	}
	for _, ix := range indexes {
		if err := indexer.IndexField(ctx, ix.obj, ix.field, ix.extract); err != nil {
			return fmt.Errorf("index %T by %s: %w", ix.obj, ix.field, err)
		}
	}
	return nil
}

func uidOf(o client.Object) []string { return []string{string(o.GetUID())} }
