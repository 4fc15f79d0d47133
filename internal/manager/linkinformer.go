package manager

import (
	"context"
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"

	kurzv1alpha1 "github.com/kurz-dev/kurz/api/v1alpha1"
	"github.com/kurz-dev/kurz/internal/cacheslim"
	"github.com/kurz-dev/kurz/internal/linkcodec"
	"github.com/kurz-dev/kurz/internal/longwatch"
)

// newInformerFunc is the cache's NewInformer: the informer of Links lists
// and watches through links, every other informer through the
// ListerWatcher controller-runtime built.
type newInformerFunc = func(toolscache.ListerWatcher, runtime.Object, time.Duration, toolscache.Indexers) toolscache.SharedIndexInformer

// informersWith returns the NewInformer that gives the Link informer links.
// Replacing controller-runtime's ListerWatcher is right only because it
// would send the same requests: Links are cached in every namespace with
// no label or field selector (nothing in the cache's ByObject or
// DefaultNamespaces names them). Metadata-only and unstructured informers
// of Links are not *Link and keep theirs.
//
// The Link informer also goes without the namespace index controller-runtime
// gives every informer (a set entry per Link, about 40 bytes each): nothing
// lists Links of a namespace through the cache without a field selector (the
// API lists through its own index, internal/pagination; the controllers look
// Links up by domain and key, internal/fieldindex). Such a list fails with
// client-go's "Index with name namespace does not exist" rather than
// answering wrong.
//
// The handlers added to it before it runs share one listener
// (sharedListener).
//
// Its Links are transformed as they are decoded (LinkListWatch), so the
// informer's own transform is not set: the initial feed
// (internal/initialevents) hands each Link to the indexes on their own
// goroutines as soon as the watch yields it, and a transform in the
// reflector, later, would write the objects they read.
func informersWith(links toolscache.ListerWatcher) newInformerFunc {
	return func(lw toolscache.ListerWatcher, obj runtime.Object, resync time.Duration, indexers toolscache.Indexers) toolscache.SharedIndexInformer {
		if _, ok := obj.(*kurzv1alpha1.Link); ok {
			indexers = withoutIndex(indexers, toolscache.NamespaceIndex)
			return decodedTransform{newSharedListener(toolscache.NewSharedIndexInformer(links, obj, resync, indexers))}
		}
		return toolscache.NewSharedIndexInformer(lw, obj, resync, indexers)
	}
}

// decodedTransform is the Link informer, whose objects come transformed
// from the decoder: the cache's transform, which controller-runtime sets on
// every informer, is not set again.
type decodedTransform struct{ toolscache.SharedIndexInformer }

func (decodedTransform) SetTransform(toolscache.TransformFunc) error { return nil }

// withoutIndex is indexers less name, in a new map.
func withoutIndex(indexers toolscache.Indexers, name string) toolscache.Indexers {
	out := make(toolscache.Indexers, len(indexers))
	for k, f := range indexers {
		if k != name {
			out[k] = f
		}
	}
	return out
}

// LinkListWatch lists and watches every Link as controller-runtime's typed
// ListerWatcher does, with kube-apiserver's JSON decoded by linkcodec: a
// replica's start is mostly decoding every Link, 4x faster there. Each Link
// is transformed (cacheslim) as it is decoded.
//
// It asks for no gzip: a replica's start streams every Link, which
// kube-apiserver then compresses and kurz decompresses, about 1.2
// CPU-seconds of the two per 100 000 Links on a 2-core machine, to save
// ~200 MB crossing the cluster network (0.2 s at 10 Gbit/s) or loopback.
//
// Its watches last hours (internal/longwatch): without kube-apiserver's
// watch cache for Links, client-go's 5 to 10 minutes had a replica in a
// quiet cluster list every Link again every 11 to 16 minutes
// (docs/scaling.md, "A quiet cluster").
func LinkListWatch(cfg *rest.Config) (longwatch.ListerWatcher, error) {
	c := rest.CopyConfig(cfg)
	c.DisableCompression = true
	gv := kurzv1alpha1.GroupVersion
	c.GroupVersion, c.APIPath = &gv, "/apis"
	if c.UserAgent == "" {
		c.UserAgent = rest.DefaultKubernetesUserAgent()
	}
	c.NegotiatedSerializer = linkcodec.Wrap(serializer.WithoutConversionCodecFactory{CodecFactory: serializer.NewCodecFactory(Scheme)},
		func(l *kurzv1alpha1.Link) { _, _ = cacheslim.Transform(l) },
		linkcodec.Skip{ManagedFields: true, Annotation: cacheslim.LastApplied})
	rc, err := rest.RESTClientFor(c)
	if err != nil {
		return nil, fmt.Errorf("client for Links: %w", err)
	}
	params := runtime.NewParameterCodec(Scheme)
	return longwatch.Wrap(&toolscache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
			list := &kurzv1alpha1.LinkList{}
			return list, rc.Get().Resource("links").VersionedParams(&opts, params).Do(ctx).Into(list)
		},
		WatchFuncWithContext: func(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
			opts.Watch = true
			return rc.Get().Resource("links").VersionedParams(&opts, params).Watch(ctx)
		},
	}), nil
}
