package initialevents

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	toolscache "k8s.io/client-go/tools/cache"
)

// Sink is what a Feed gives objects to: an index that an informer's
// handler feeds too.
type Sink[T any] interface {
	Upsert(obj T)
	Delete(obj T)
}

// Feed hands the first complete initial stream of the ListerWatcher it
// wraps to its sinks. A nil *Feed feeds nothing and skips nothing, so an
// index set up without one is fed by its handler alone, as before.
type Feed[T runtime.Object] struct {
	mu     sync.Mutex
	groups [][]Sink[T]
	// begun is set by the first stream tapped: a sink added later would
	// miss objects and then skip them.
	begun bool
	// over is set once the sinks hold a complete initial list (fed) or
	// the informer listed instead of streaming: nothing more is tapped,
	// the informer's own relists take it from there.
	over bool
	// fed is the stream the sinks hold, once one completed.
	fed atomic.Pointer[Stream]
	// onCut is told of each tapped stream the server cut (OnCut).
	onCut func(Cut)
}

// Stream is what a Feed gave its sinks: the events of the stream that
// completed (one per object, unless an object changed while it streamed)
// and when the watch answered and how long it took from there to its
// bookmark.
type Stream struct {
	Events int
	Began  time.Time
	Took   time.Duration
}

// Cut is an initial stream that the server ended before its bookmark:
// the sinks gave its objects back, and client-go's reflector lists every
// object again from the start. Without kube-apiserver's watch cache, a
// stream that outlasts the 5 to 10 minutes etcd keeps the revision it
// reads at is cut so, every time (docs/scaling.md, "A start longer than
// etcd keeps its revision"), and nothing but this says so at kurz's
// default log level.
type Cut struct {
	// Events is how many objects the stream had sent.
	Events int
	// Took is from the watch's answer to the cut.
	Took time.Duration
	// Err is what the server said in an ERROR event; nil when it just
	// closed the stream.
	Err error
}

// New returns a Feed with no sinks.
func New[T runtime.Object]() *Feed[T] { return &Feed[T]{} }

// errBegun is Add's error once a stream was tapped.
var errBegun = errors.New("initialevents: sink added after the first stream began")

// Add adds a group of sinks, fed in order on a goroutine of their own, as
// one informer handler feeds them. Add every sink before the informer
// starts.
func (f *Feed[T]) Add(sinks ...Sink[T]) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.begun {
		return errBegun
	}
	f.groups = append(f.groups, sinks)
	return nil
}

// OnCut has fn told, on the tap's goroutine, of each tapped stream that
// the server ended before its bookmark, with an ERROR event or by closing
// it; not of one the reflector stopped on its own (a shutdown). Call it
// before the informer starts.
func (f *Feed[T]) OnCut(fn func(Cut)) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.onCut = fn
}

// cut tells OnCut's function of c, if there is one.
func (f *Feed[T]) cut(c Cut) {
	f.mu.Lock()
	fn := f.onCut
	f.mu.Unlock()
	if fn != nil {
		fn(c)
	}
}

// Skip tells a handler of the Feed's sinks to skip an add: one of the
// informer's initial list, which the sinks already hold.
func (f *Feed[T]) Skip(isInInitialList bool) bool {
	return f != nil && isInInitialList && f.fed.Load() != nil
}

// Fed reports whether the sinks hold a complete initial list, and what it
// was.
func (f *Feed[T]) Fed() (Stream, bool) {
	if f == nil {
		return Stream{}, false
	}
	if s := f.fed.Load(); s != nil {
		return *s, true
	}
	return Stream{}, false
}

// Wrap returns lw with the Feed tapping its watches that send initial
// events, until one completes.
func (f *Feed[T]) Wrap(lw toolscache.ListerWatcherWithContext) toolscache.ListerWatcher {
	return listerWatcher[T]{inner: lw, feed: f}
}

// tapNext returns the sink groups for a new stream, or nil when streams are
// no longer tapped.
func (f *Feed[T]) tapNext() [][]Sink[T] {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.over || len(f.groups) == 0 {
		return nil
	}
	f.begun = true
	return f.groups
}

// end stops tapping; fed is the stream that completed, if one did.
func (f *Feed[T]) end(fed *Stream) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.over = true
	if fed != nil {
		f.fed.Store(fed)
	}
}

// listerWatcher is the wrapped ListerWatcher. It implements both of
// client-go's interfaces, as toolscache.ListWatch does.
type listerWatcher[T runtime.Object] struct {
	inner toolscache.ListerWatcherWithContext
	feed  *Feed[T]
}

// ListWithContext lists through: an informer that lists did not stream, and
// its list is not the Feed's to give.
func (lw listerWatcher[T]) ListWithContext(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
	lw.feed.end(nil)
	return lw.inner.ListWithContext(ctx, opts)
}

func (lw listerWatcher[T]) WatchWithContext(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
	w, err := lw.inner.WatchWithContext(ctx, opts)
	if err != nil || opts.SendInitialEvents == nil || !*opts.SendInitialEvents {
		return w, err
	}
	groups := lw.feed.tapNext()
	if groups == nil {
		return w, nil
	}
	return tap(w, lw.feed, groups), nil
}

func (lw listerWatcher[T]) List(opts metav1.ListOptions) (runtime.Object, error) {
	return lw.ListWithContext(context.Background(), opts)
}

func (lw listerWatcher[T]) Watch(opts metav1.ListOptions) (watch.Interface, error) {
	return lw.WatchWithContext(context.Background(), opts)
}
