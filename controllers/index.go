package controllers

import (
	"context"
	"fmt"

	"sigs.k8s.io/controller-runtime/pkg/client"

	kurzv1alpha1 "github.com/kurz-dev/kurz/api/v1alpha1"
)

// linkDomainKeyIndex indexes Links by "<spec.domain>/<spec.key>". Key
// conflicts are found through it: the spec.domain index alone would hand
// every reconcile all links of a domain, which is quadratic work when one
// domain holds many thousands of links.
const linkDomainKeyIndex = "kurz.dev/controllers.spec.domain+key"

func indexLinksByDomainKey(indexer client.FieldIndexer) error {
	err := indexer.IndexField(context.Background(), &kurzv1alpha1.Link{}, linkDomainKeyIndex, func(o client.Object) []string {
		l := o.(*kurzv1alpha1.Link)
		return []string{domainKey(l)}
	})
	if err != nil {
		return fmt.Errorf("index Links by domain and key: %w", err)
	}
	return nil
}

func domainKey(l *kurzv1alpha1.Link) string {
	return string(l.Spec.Domain) + "/" + l.Spec.Key
}
