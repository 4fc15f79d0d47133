package restapi

import (
	"context"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kurzv1alpha1 "github.com/kurz-dev/kurz/api/v1alpha1"
	"github.com/kurz-dev/kurz/internal/pagination"
	"github.com/kurz-dev/kurz/internal/visibility"
)

// resource is what the handlers need to know of one kind (Link or Domain)
// to list, find, update and delete its objects the same way: T is the
// object, V its API view.
type resource[T client.Object, V any] struct {
	name  string // "link" or "domain", for wrapped errors
	index *pagination.Index[T]
	// writes tells when index holds a write (read-your-writes).
	writes    *visibility.Tracker
	newObject func() T
	notFound  func() *apiError
	view      func(obj T, workspaceID string) V
}

func linkResource() *resource[*kurzv1alpha1.Link, linkView] {
	r := &resource[*kurzv1alpha1.Link, linkView]{
		name:      "link",
		newObject: func() *kurzv1alpha1.Link { return &kurzv1alpha1.Link{} },
		notFound:  errLinkNotFound,
		view:      newLinkView,
	}
	return r.indexedBy(linkCreatedAt)
}

func domainResource() *resource[*kurzv1alpha1.Domain, domainView] {
	r := &resource[*kurzv1alpha1.Domain, domainView]{
		name:      "domain",
		newObject: func() *kurzv1alpha1.Domain { return &kurzv1alpha1.Domain{} },
		notFound:  errDomainNotFound,
		view:      newDomainView,
	}
	return r.indexedBy(domainCreatedAt)
}

// indexedBy gives k its list index, ordered by createdAt, and the tracker
// that tells when a write has reached that index.
func (k *resource[T, V]) indexedBy(createdAt func(T) time.Time) *resource[T, V] {
	k.index = pagination.NewIndex(createdAt)
	k.writes = visibility.Track(k.index)
	return k
}

// find returns a copy of the cached object with uid id in the caller's
// workspace. Another workspace's ids, unknown ids and objects being deleted
// are all "not found": a caller never learns what exists elsewhere. The
// list index already maps uids to objects, so no cache index by uid is
// kept (it cost about 500 bytes per Link).
func (k *resource[T, V]) find(_ context.Context, _ *server, c *caller, id string) (T, error) {
	var zero T
	obj, ok := k.index.Get(types.UID(canonicalID(id)))
	if !ok || obj.GetNamespace() != c.workspace || obj.GetDeletionTimestamp() != nil {
		return zero, k.notFound()
	}
	return obj.DeepCopyObject().(T), nil
}
