package manager

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	toolscache "k8s.io/client-go/tools/cache"

	kurzv1alpha1 "github.com/kurz-dev/kurz/api/v1alpha1"
)

// streamedLinks is a ListerWatcher whose watch-list streams links, then
// the bookmark that ends its initial events, then whatever the test sends
// on the watch it keeps.
type streamedLinks struct {
	links []kurzv1alpha1.Link
	mu    sync.Mutex
	w     *watch.FakeWatcher
}

func (s *streamedLinks) lw() *toolscache.ListWatch {
	return &toolscache.ListWatch{
		ListWithContextFunc: func(context.Context, metav1.ListOptions) (runtime.Object, error) {
			return nil, fmt.Errorf("the watch-list streams, nothing lists")
		},
		WatchFuncWithContext: func(_ context.Context, opts metav1.ListOptions) (watch.Interface, error) {
			w := watch.NewFakeWithChanSize(len(s.links)+16, false)
			if opts.SendInitialEvents != nil && *opts.SendInitialEvents {
				for i := range s.links {
					w.Add(&s.links[i])
				}
				w.Action(watch.Bookmark, &kurzv1alpha1.Link{ObjectMeta: metav1.ObjectMeta{ResourceVersion: "1",
					Annotations: map[string]string{metav1.InitialEventsAnnotationKey: "true"}}})
			}
			s.mu.Lock()
			s.w = w
			s.mu.Unlock()
			return w, nil
		},
	}
}

func (s *streamedLinks) watcher() *watch.FakeWatcher {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w
}

func linksNamed(n int) []kurzv1alpha1.Link {
	links := make([]kurzv1alpha1.Link, n)
	for i := range links {
		links[i].Namespace, links[i].Name, links[i].ResourceVersion = "ns", fmt.Sprintf("l%d", i), "1"
	}
	return links
}

// countingInformer counts the handlers client-go itself was given.
type countingInformer struct {
	toolscache.SharedIndexInformer
	mu    sync.Mutex
	added int
}

func (c *countingInformer) AddEventHandler(h toolscache.ResourceEventHandler) (toolscache.ResourceEventHandlerRegistration, error) {
	c.mu.Lock()
	c.added++
	c.mu.Unlock()
	return c.SharedIndexInformer.AddEventHandler(h)
}

func (c *countingInformer) listeners() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.added
}

// seen records what a handler was given, in order.
type seen struct {
	mu     sync.Mutex
	events []string
}

func (s *seen) add(e string) {
	s.mu.Lock()
	s.events = append(s.events, e)
	s.mu.Unlock()
}

func (s *seen) all() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.events...)
}

func (s *seen) handler() toolscache.ResourceEventHandler {
	name := func(o any) string { return o.(*kurzv1alpha1.Link).Name }
	return toolscache.ResourceEventHandlerDetailedFuncs{
		AddFunc:    func(o any, initial bool) { s.add(fmt.Sprintf("add %s %v", name(o), initial)) },
		UpdateFunc: func(_, o any) { s.add("update " + name(o)) },
		DeleteFunc: func(o any) { s.add("delete " + name(o)) },
	}
}

// The handlers added before the informer runs share one client-go
// listener, and each gets every event in the order the informer delivers
// them (the same order for all), the initial list marked as such; their
// registrations sync once it is delivered. A handler removed gets nothing
// more; one added once the informer runs gets a listener of its own and
// the objects the informer holds.
func TestHandlersAddedBeforeRunShareOneListener(t *testing.T) {
	g := NewWithT(t)
	src := &streamedLinks{links: linksNamed(3)}
	counted := &countingInformer{SharedIndexInformer: toolscache.NewSharedIndexInformer(src.lw(), &kurzv1alpha1.Link{}, 0, toolscache.Indexers{})}
	inf := newSharedListener(counted)

	var early [3]seen
	var regs []toolscache.ResourceEventHandlerRegistration
	for i := range early {
		reg, err := inf.AddEventHandler(early[i].handler())
		g.Expect(err).NotTo(HaveOccurred())
		regs = append(regs, reg)
	}
	g.Expect(counted.listeners()).To(Equal(1), "one client-go listener for the three")

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go inf.RunWithContext(ctx)
	g.Eventually(func() bool {
		for _, r := range regs {
			if !r.HasSynced() {
				return false
			}
		}
		return true
	}, 10*time.Second, 10*time.Millisecond).Should(BeTrue())
	// client-go hands the initial list over in no particular order, but
	// every handler sees the same one.
	initial := early[0].all()
	g.Expect(initial).To(ConsistOf("add l0 true", "add l1 true", "add l2 true"))
	for i := range early {
		g.Expect(early[i].all()).To(Equal(initial), "handler %d", i)
	}

	// Removed: the second gets nothing more.
	g.Expect(inf.RemoveEventHandler(regs[1])).To(Succeed())
	w := src.watcher()
	changed := src.links[0].DeepCopy()
	changed.ResourceVersion = "2"
	w.Modify(changed)
	created := &kurzv1alpha1.Link{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "l3", ResourceVersion: "3"}}
	w.Add(created)
	w.Delete(src.links[2].DeepCopy())
	after := append(append([]string(nil), initial...), "update l0", "add l3 false", "delete l2")
	g.Eventually(early[0].all, 10*time.Second, 10*time.Millisecond).Should(Equal(after))
	g.Eventually(early[2].all, 10*time.Second, 10*time.Millisecond).Should(Equal(after))
	g.Expect(early[1].all()).To(Equal(initial), "removed before the changes")

	// Added while it runs: a listener of its own, given what the informer
	// holds as its initial list.
	var late seen
	lateReg, err := inf.AddEventHandler(late.handler())
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(counted.listeners()).To(Equal(2))
	g.Eventually(lateReg.HasSynced, 10*time.Second, 10*time.Millisecond).Should(BeTrue())
	g.Expect(late.all()).To(ConsistOf("add l0 true", "add l1 true", "add l3 true"))
	g.Expect(inf.RemoveEventHandler(lateReg)).To(Succeed())
}

// BenchmarkInitialListToHandlers measures a start's time from the informer
// running to every handler having the initial list, for 100 000 Links and
// the five handlers a replica adds to the Link informer before the caches
// start: on client-go's listeners of their own, and on one shared
// listener. Each iteration streams the Links afresh:
// go test -run '^$' -bench InitialListToHandlers -benchtime 5x ./internal/manager/
func BenchmarkInitialListToHandlers(b *testing.B) {
	src := &streamedLinks{links: linksNamed(100000)}
	noop := toolscache.ResourceEventHandlerDetailedFuncs{AddFunc: func(any, bool) {}}
	for _, shared := range []bool{false, true} {
		for _, handlers := range []int{1, 5} {
			b.Run(fmt.Sprintf("shared=%v/handlers=%d", shared, handlers), func(b *testing.B) {
				for b.Loop() {
					inf := toolscache.NewSharedIndexInformer(src.lw(), &kurzv1alpha1.Link{}, 0, toolscache.Indexers{})
					if shared {
						inf = newSharedListener(inf)
					}
					var regs []toolscache.ResourceEventHandlerRegistration
					for range handlers {
						reg, err := inf.AddEventHandler(noop)
						if err != nil {
							b.Fatal(err)
						}
						regs = append(regs, reg)
					}
					ctx, cancel := context.WithCancel(context.Background())
					go inf.RunWithContext(ctx)
					for _, r := range regs {
						for !r.HasSynced() {
							time.Sleep(time.Millisecond)
						}
					}
					cancel()
				}
			})
		}
	}
}
