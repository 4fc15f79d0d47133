package longwatch

import (
	"context"
	"math/rand/v2"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/watchlist"
)

// MinTimeout is the shortest timeout Wrap asks for; the longest is twice
// it. Spreading them, as client-go does, keeps replicas that started
// together from watching again together.
const MinTimeout = 12 * time.Hour

// Timeout returns a watch timeout in seconds, in [MinTimeout, 2*MinTimeout).
func Timeout() int64 {
	return int64((MinTimeout + rand.N(MinTimeout)) / time.Second)
}

// ListerWatcher is both of client-go's interfaces, as toolscache.ListWatch
// is: toolscache.NewSharedIndexInformer takes the first, and wrappers such
// as internal/initialevents the second.
type ListerWatcher interface {
	toolscache.ListerWatcher
	toolscache.ListerWatcherWithContext
}

// Wrap returns lw with every watch asked to last Timeout() instead of the
// reflector's 5 to 10 minutes. Lists, and everything else about a watch,
// pass through unchanged.
func Wrap(lw toolscache.ListerWatcher) ListerWatcher {
	return listerWatcher{inner: toolscache.ToListerWatcherWithContext(lw), noWatchList: watchlist.DoesClientNotSupportWatchListSemantics(lw)}
}

// listerWatcher implements both of client-go's interfaces, as
// toolscache.ListWatch does, and keeps the watch-list capability of the
// ListerWatcher it wraps.
type listerWatcher struct {
	inner       toolscache.ListerWatcherWithContext
	noWatchList bool
}

func (lw listerWatcher) ListWithContext(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
	return lw.inner.ListWithContext(ctx, opts)
}

func (lw listerWatcher) WatchWithContext(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
	t := Timeout()
	opts.TimeoutSeconds = &t
	return lw.inner.WatchWithContext(ctx, opts)
}

// List and Watch are client-go's context-less interface, which
// toolscache.NewSharedIndexInformer still takes.
func (lw listerWatcher) List(opts metav1.ListOptions) (runtime.Object, error) {
	return lw.ListWithContext(context.Background(), opts)
}

func (lw listerWatcher) Watch(opts metav1.ListOptions) (watch.Interface, error) {
	return lw.WatchWithContext(context.Background(), opts)
}

// IsWatchListSemanticsUnSupported passes on what the wrapped ListerWatcher
// says: the reflector asks it to decide whether to stream its list.
func (lw listerWatcher) IsWatchListSemanticsUnSupported() bool { return lw.noWatchList }
