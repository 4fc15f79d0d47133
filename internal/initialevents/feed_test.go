package initialevents

import (
	"context"
	"fmt"
	"sync"
	"testing"

	. "github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"

	kurzv1alpha1 "github.com/kurz-dev/kurz/api/v1alpha1"
)

// These tests drive the tap with watch.FakeWatcher streams: the order of
// events, bookmarks and failures is the logic under test. Against a real
// kube-apiserver the Feed is exercised by internal/manager's tests.

// set is a Sink holding names, safe for the tap's goroutines.
type set struct {
	mu    sync.Mutex
	names map[string]bool
}

func newSet() *set { return &set{names: map[string]bool{}} }

func (s *set) Upsert(l *kurzv1alpha1.Link) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.names[l.Name] = true
}

func (s *set) Delete(l *kurzv1alpha1.Link) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.names, l.Name)
}

func (s *set) len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.names)
}

func (s *set) has(name string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.names[name]
}

// lw hands out the fake watchers of its test, one per Watch, and counts
// Lists.
type lw struct {
	watches chan *watch.FakeWatcher
	lists   int
}

func newLW() *lw { return &lw{watches: make(chan *watch.FakeWatcher, 4)} }

func (l *lw) ListWithContext(context.Context, metav1.ListOptions) (runtime.Object, error) {
	l.lists++
	return &kurzv1alpha1.LinkList{}, nil
}

func (l *lw) WatchWithContext(context.Context, metav1.ListOptions) (watch.Interface, error) {
	w := watch.NewFake()
	l.watches <- w
	return w, nil
}

// wrap is f.Wrap(l) as the reflector calls it, with contexts.
func wrap(f *Feed[*kurzv1alpha1.Link], l *lw) toolscache.ListerWatcherWithContext {
	return toolscache.ToListerWatcherWithContext(f.Wrap(l))
}

func fed(f *Feed[*kurzv1alpha1.Link]) bool { _, ok := f.Fed(); return ok }

var initialEvents = metav1.ListOptions{SendInitialEvents: ptr.To(true)}

func link(name string) *kurzv1alpha1.Link {
	return &kurzv1alpha1.Link{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: name}}
}

func endBookmark() *kurzv1alpha1.Link {
	return &kurzv1alpha1.Link{ObjectMeta: metav1.ObjectMeta{ResourceVersion: "42",
		Annotations: map[string]string{metav1.InitialEventsAnnotationKey: "true"}}}
}

// stream starts a tapped watch with initial events and returns it and the
// fake the test writes to.
func stream(t *testing.T, f *Feed[*kurzv1alpha1.Link], l *lw) (watch.Interface, *watch.FakeWatcher) {
	t.Helper()
	w, err := wrap(f, l).WatchWithContext(t.Context(), initialEvents)
	if err != nil {
		t.Fatal(err)
	}
	return w, <-l.watches
}

// send writes ev to fake from a goroutine (FakeWatcher blocks until read)
// and reads it back from w.
func send(t *testing.T, w watch.Interface, fake *watch.FakeWatcher, typ watch.EventType, obj runtime.Object) watch.Event {
	t.Helper()
	go fake.Action(typ, obj)
	ev, ok := <-w.ResultChan()
	if !ok {
		t.Fatalf("watch closed before %s", typ)
	}
	return ev
}

// The sinks hold every initial object before the reflector reads the
// bookmark that ends them, which is what lets handlers skip the informer's
// initial list; later events are the handlers' alone.
func TestCompleteStreamIsFedBeforeItsBookmark(t *testing.T) {
	g := NewWithT(t)
	f := New[*kurzv1alpha1.Link]()
	a, b := newSet(), newSet()
	g.Expect(f.Add(a)).To(Succeed())
	g.Expect(f.Add(b)).To(Succeed())
	l := newLW()
	w, fake := stream(t, f, l)
	defer w.Stop()

	const n = 3*batchSize + 7 // full batches and a partial one
	for i := range n {
		ev := send(t, w, fake, watch.Added, link(fmt.Sprint("l", i)))
		g.Expect(ev.Object.(*kurzv1alpha1.Link).Name).To(Equal(fmt.Sprint("l", i)))
	}
	g.Expect(fed(f)).To(BeFalse())
	g.Expect(f.Skip(true)).To(BeFalse())

	ev := send(t, w, fake, watch.Bookmark, endBookmark())
	g.Expect(ev.Type).To(Equal(watch.Bookmark))
	g.Expect(a.len()).To(Equal(n), "every initial object is in the sink when the bookmark is read")
	g.Expect(b.len()).To(Equal(n))
	stream, ok := f.Fed()
	g.Expect(ok).To(BeTrue())
	g.Expect(stream.Events).To(Equal(n))
	g.Expect(stream.Took).To(BeNumerically(">", 0))
	g.Expect(f.Skip(true)).To(BeTrue())
	g.Expect(f.Skip(false)).To(BeFalse(), "only the initial list's adds are skipped")

	send(t, w, fake, watch.Added, link("later"))
	g.Expect(a.has("later")).To(BeFalse(), "after the bookmark, events are the informer's to deliver")
	g.Expect(f.Add(newSet())).To(MatchError(errBegun))

	// A relist (a watch-list after the watch expired) is not tapped.
	w2, err := wrap(f, l).WatchWithContext(t.Context(), initialEvents)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(w2).To(BeIdenticalTo(<-l.watches))
}

// Deletes and updates inside the initial events (the reflector applies
// them to its list too) reach the sinks in order.
func TestInitialEventsAreAppliedInOrder(t *testing.T) {
	g := NewWithT(t)
	f := New[*kurzv1alpha1.Link]()
	s := newSet()
	g.Expect(f.Add(s)).To(Succeed())
	w, fake := stream(t, f, newLW())
	defer w.Stop()
	send(t, w, fake, watch.Added, link("a"))
	send(t, w, fake, watch.Added, link("b"))
	send(t, w, fake, watch.Deleted, link("a"))
	send(t, w, fake, watch.Modified, link("c"))
	send(t, w, fake, watch.Bookmark, &kurzv1alpha1.Link{}) // a progress bookmark ends nothing
	g.Expect(fed(f)).To(BeFalse())
	send(t, w, fake, watch.Bookmark, endBookmark())
	g.Expect(s.names).To(Equal(map[string]bool{"b": true, "c": true}))
}

// A stream that ends before its bookmark, or that the reflector stops
// (an ERROR event, a timeout), is taken back out of the sinks before the
// next attempt starts, and the next attempt is tapped.
func TestFailedStreamIsTakenBack(t *testing.T) {
	for _, tc := range []struct {
		name string
		end  func(w watch.Interface, fake *watch.FakeWatcher)
	}{
		{"server closes", func(w watch.Interface, fake *watch.FakeWatcher) {
			fake.Stop()
			for range w.ResultChan() {
			}
		}},
		{"reflector stops", func(w watch.Interface, _ *watch.FakeWatcher) { w.Stop() }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			f := New[*kurzv1alpha1.Link]()
			s := newSet()
			g.Expect(f.Add(s)).To(Succeed())
			l := newLW()
			w, fake := stream(t, f, l)
			for i := range batchSize + 1 {
				send(t, w, fake, watch.Added, link(fmt.Sprint("old", i)))
			}
			tc.end(w, fake)
			w.Stop() // returns once the sinks are as they were
			g.Expect(s.len()).To(BeZero())
			g.Expect(fed(f)).To(BeFalse())

			w, fake = stream(t, f, l)
			defer w.Stop()
			send(t, w, fake, watch.Added, link("new"))
			send(t, w, fake, watch.Bookmark, endBookmark())
			g.Expect(s.names).To(Equal(map[string]bool{"new": true}))
			g.Expect(fed(f)).To(BeTrue())
		})
	}
}

// An informer that lists (no watch-list: an older kube-apiserver, or
// client-go's fallback) got its list elsewhere: nothing is tapped after,
// and no add is skipped.
func TestListEndsTapping(t *testing.T) {
	g := NewWithT(t)
	f := New[*kurzv1alpha1.Link]()
	g.Expect(f.Add(newSet())).To(Succeed())
	l := newLW()
	_, err := wrap(f, l).ListWithContext(t.Context(), metav1.ListOptions{})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(l.lists).To(Equal(1))
	w, err := wrap(f, l).WatchWithContext(t.Context(), initialEvents)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(w).To(BeIdenticalTo(<-l.watches))
	g.Expect(f.Skip(true)).To(BeFalse())
}

// Watches without initial events, and a Feed without sinks, are not
// tapped; a nil Feed skips nothing.
func TestUntapped(t *testing.T) {
	g := NewWithT(t)
	l := newLW()
	f := New[*kurzv1alpha1.Link]()
	w, err := wrap(f, l).WatchWithContext(t.Context(), initialEvents)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(w).To(BeIdenticalTo(<-l.watches), "no sinks")
	g.Expect(f.Add(newSet())).To(Succeed())
	w, err = wrap(f, l).WatchWithContext(t.Context(), metav1.ListOptions{ResourceVersion: "7"})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(w).To(BeIdenticalTo(<-l.watches), "no initial events")
	var none *Feed[*kurzv1alpha1.Link]
	g.Expect(none.Skip(true)).To(BeFalse())
	g.Expect(fed(none)).To(BeFalse())
}

// A stream the server ends before its bookmark (kube-apiserver's ERROR
// event when etcd compacted the revision it reads at, or a closed
// connection) is reported cut, with how many objects had come and what
// the server said; one the reflector stops on its own (a shutdown), or
// one that completes, is not.
func TestCutStreamIsReported(t *testing.T) {
	expired := apierrors.NewResourceExpired("The resourceVersion for the provided list is too old.")
	for _, tc := range []struct {
		name    string
		end     func(w watch.Interface, fake *watch.FakeWatcher)
		cut     bool
		expired bool
	}{
		{"ERROR event", func(w watch.Interface, fake *watch.FakeWatcher) {
			ev := send(t, w, fake, watch.Error, &expired.ErrStatus)
			if ev.Type != watch.Error {
				t.Fatalf("the reflector got %s, want the ERROR event", ev.Type)
			}
			w.Stop() // as the reflector does on an ERROR event
		}, true, true},
		{"server closes", func(w watch.Interface, fake *watch.FakeWatcher) {
			fake.Stop()
			for range w.ResultChan() {
			}
		}, true, false},
		{"reflector stops", func(w watch.Interface, _ *watch.FakeWatcher) { w.Stop() }, false, false},
		{"bookmark", func(w watch.Interface, fake *watch.FakeWatcher) {
			send(t, w, fake, watch.Bookmark, endBookmark())
			w.Stop()
		}, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			f := New[*kurzv1alpha1.Link]()
			g.Expect(f.Add(newSet())).To(Succeed())
			var mu sync.Mutex
			var cuts []Cut
			f.OnCut(func(c Cut) {
				mu.Lock()
				defer mu.Unlock()
				cuts = append(cuts, c)
			})
			w, fake := stream(t, f, newLW())
			const n = batchSize + 3 // a batch given to the sinks and a partial one
			for i := range n {
				send(t, w, fake, watch.Added, link(fmt.Sprint("l", i)))
			}
			tc.end(w, fake)
			w.Stop() // returns once the tap is done

			mu.Lock()
			defer mu.Unlock()
			if !tc.cut {
				g.Expect(cuts).To(BeEmpty())
				return
			}
			g.Expect(cuts).To(HaveLen(1))
			g.Expect(cuts[0].Events).To(Equal(n))
			g.Expect(cuts[0].Took).To(BeNumerically(">", 0))
			if tc.expired {
				g.Expect(apierrors.IsResourceExpired(cuts[0].Err)).To(BeTrue(), "got %v", cuts[0].Err)
				g.Expect(cuts[0].Err).To(MatchError(ContainSubstring("too old")))
			} else {
				g.Expect(cuts[0].Err).NotTo(HaveOccurred())
			}
		})
	}
}
