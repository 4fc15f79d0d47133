package manager

import (
	"context"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	toolscache "k8s.io/client-go/tools/cache"

	kurzv1alpha1 "github.com/kurz-dev/kurz/api/v1alpha1"
)

// listCounter is a ListerWatcher that serves an empty list and counts
// which of them an informer used.
type listCounter struct{ lists chan string }

func (c listCounter) lw(name string, list runtime.Object) *toolscache.ListWatch {
	return &toolscache.ListWatch{
		ListWithContextFunc: func(context.Context, metav1.ListOptions) (runtime.Object, error) {
			c.lists <- name
			return list, nil
		},
		WatchFuncWithContext: func(context.Context, metav1.ListOptions) (watch.Interface, error) {
			c.lists <- name
			return watch.NewFake(), nil
		},
	}
}

// TestInformersWithLinks: the informer of *Link lists and watches through
// the Link ListerWatcher, every other kind (and metadata-only Links)
// through controller-runtime's; only the Link informer goes without the
// namespace index.
func TestInformersWithLinks(t *testing.T) {
	for _, tc := range []struct {
		obj  runtime.Object
		list runtime.Object
		want string
	}{
		{&kurzv1alpha1.Link{}, &kurzv1alpha1.LinkList{}, "links"},
		{&kurzv1alpha1.Domain{}, &kurzv1alpha1.DomainList{}, "controller-runtime"},
		{&metav1.PartialObjectMetadata{}, &metav1.PartialObjectMetadataList{}, "controller-runtime"},
	} {
		c := listCounter{lists: make(chan string, 16)}
		indexers := toolscache.Indexers{toolscache.NamespaceIndex: toolscache.MetaNamespaceIndexFunc}
		inf := informersWith(c.lw("links", &kurzv1alpha1.LinkList{}))(c.lw("controller-runtime", tc.list), tc.obj, 0, indexers)
		_, hasNamespace := inf.GetIndexer().GetIndexers()[toolscache.NamespaceIndex]
		if wantNamespace := tc.want != "links"; hasNamespace != wantNamespace {
			t.Errorf("informer of %T has the namespace index: %v, want %v", tc.obj, hasNamespace, wantNamespace)
		}
		if len(indexers) != 1 {
			t.Errorf("informersWith changed the indexers it was given: %v", indexers)
		}
		ctx, cancel := context.WithCancel(t.Context())
		go inf.RunWithContext(ctx)
		if got := <-c.lists; got != tc.want {
			t.Errorf("informer of %T listed through %s, want %s", tc.obj, got, tc.want)
		}
		cancel()
	}
}
