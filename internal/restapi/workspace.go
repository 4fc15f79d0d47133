package restapi

import (
	"context"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kurzv1alpha1 "github.com/kurz-dev/kurz/api/v1alpha1"
	"github.com/kurz-dev/kurz/internal/fieldindex"
	"github.com/kurz-dev/kurz/internal/timestamps"
)

// workspaceID is the uid of the caller's namespace (read from the cache).
func (s *server) workspaceID(ctx context.Context, c *caller) (string, error) {
	var ns corev1.Namespace
	if err := s.client.Get(ctx, types.NamespacedName{Name: c.workspace}, &ns); err != nil {
		return "", fmt.Errorf("read namespace %s: %w", c.workspace, err)
	}
	return string(ns.UID), nil
}

// domainsNamed returns every live Domain, in any workspace, claiming host.
func (s *server) domainsNamed(ctx context.Context, host string) ([]kurzv1alpha1.Domain, error) {
	var list kurzv1alpha1.DomainList
	if err := s.client.List(ctx, &list, client.MatchingFields{fieldindex.Domain: host}); err != nil {
		return nil, fmt.Errorf("list domains named %s: %w", host, err)
	}
	out := list.Items[:0]
	for _, d := range list.Items {
		if d.DeletionTimestamp == nil {
			out = append(out, d)
		}
	}
	return out, nil
}

// linkCreatedAt orders the link index: the API's microsecond stamp (in
// status, or announced in the Link until the controller writes it), else
// the object's creation time (timestamps.LinkCreated).
func linkCreatedAt(l *kurzv1alpha1.Link) time.Time { return timestamps.LinkCreated(l) }

// linkUpdatedAt is what the API answers as updated_at
// (timestamps.LinkUpdated).
func linkUpdatedAt(l *kurzv1alpha1.Link) time.Time { return timestamps.LinkUpdated(l) }

func domainCreatedAt(d *kurzv1alpha1.Domain) time.Time {
	if d.Status.CreatedAt != nil {
		return d.Status.CreatedAt.Time
	}
	return d.CreationTimestamp.Time
}

// canonicalID is the form object uids are stored in: UUIDs compare without
// regard to case, Kubernetes writes them in lowercase.
func canonicalID(id string) string { return strings.ToLower(id) }
