package longwatch

import (
	"context"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/watchlist"
)

// recorder is a ListerWatcher that keeps the options it was called with.
type recorder struct {
	listed, watched []metav1.ListOptions
}

func (r *recorder) listWatch() *toolscache.ListWatch {
	return &toolscache.ListWatch{
		ListWithContextFunc: func(_ context.Context, o metav1.ListOptions) (runtime.Object, error) {
			r.listed = append(r.listed, o)
			return &metav1.List{}, nil
		},
		WatchFuncWithContext: func(_ context.Context, o metav1.ListOptions) (watch.Interface, error) {
			r.watched = append(r.watched, o)
			return watch.NewEmptyWatch(), nil
		},
	}
}

func TestWrapAsksForHoursAndKeepsTheRest(t *testing.T) {
	r := &recorder{}
	lw := Wrap(r.listWatch())
	five := int64(300)
	yes := true
	asked := metav1.ListOptions{
		ResourceVersion: "42", TimeoutSeconds: &five, AllowWatchBookmarks: true,
		SendInitialEvents: &yes, ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan,
	}
	for range 200 {
		if _, err := lw.WatchWithContext(context.Background(), asked); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := lw.Watch(asked); err != nil { //nolint:staticcheck // the context-less interface, which NewSharedIndexInformer takes
		t.Fatal(err)
	}
	if *asked.TimeoutSeconds != 300 {
		t.Errorf("Wrap changed the caller's options: timeout %d", *asked.TimeoutSeconds)
	}
	lo, hi := int64(MinTimeout/time.Second), int64(2*MinTimeout/time.Second)
	spread := map[int64]bool{}
	for _, o := range r.watched {
		got := *o.TimeoutSeconds
		if got < lo || got >= hi {
			t.Errorf("timeout %d s, want [%d, %d)", got, lo, hi)
		}
		spread[got] = true
		o.TimeoutSeconds = asked.TimeoutSeconds
		if o.ResourceVersion != "42" || !o.AllowWatchBookmarks || o.SendInitialEvents == nil || !*o.SendInitialEvents ||
			o.ResourceVersionMatch != metav1.ResourceVersionMatchNotOlderThan {
			t.Errorf("watch options changed besides the timeout: %+v", o)
		}
	}
	// 201 draws from 43 200 seconds: all equal would mean no spread.
	if len(spread) < 2 {
		t.Errorf("every watch asked for the same timeout: %v", spread)
	}

	if _, err := lw.ListWithContext(context.Background(), metav1.ListOptions{ResourceVersion: "7", Limit: 500}); err != nil {
		t.Fatal(err)
	}
	if len(r.listed) != 1 || r.listed[0].ResourceVersion != "7" || r.listed[0].Limit != 500 || r.listed[0].TimeoutSeconds != nil {
		t.Errorf("list options changed: %+v", r.listed)
	}
}

// noWatchList is a ListerWatcher of a client that cannot stream lists, as
// controller-runtime marks a fake client's.
type noWatchList struct{ *toolscache.ListWatch }

func (noWatchList) IsWatchListSemanticsUnSupported() bool { return true }

func TestWrapKeepsWatchListSupport(t *testing.T) {
	r := &recorder{}
	if watchlist.DoesClientNotSupportWatchListSemantics(Wrap(r.listWatch())) {
		t.Error("a ListerWatcher that can stream lists lost it when wrapped")
	}
	if !watchlist.DoesClientNotSupportWatchListSemantics(Wrap(noWatchList{r.listWatch()})) {
		t.Error("a ListerWatcher that cannot stream lists gained it when wrapped")
	}
}
