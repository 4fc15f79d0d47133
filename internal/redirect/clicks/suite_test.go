package clicks

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kurzv1alpha1 "github.com/kurz-dev/kurz/api/v1alpha1"
	"github.com/kurz-dev/kurz/internal/testenv"
	"github.com/kurz-dev/kurz/internal/testenv/apiproxy"
)

var (
	cfg *rest.Config
	k8s client.Client
)

// ns holds every test's Links; newLink gives each a name of its own.
const ns = "clicks"

func TestMain(m *testing.M) {
	testenv.Main(m, testenv.Options{}, func(e *testenv.Env) error {
		cfg, k8s = e.Config, e.Client
		return k8s.Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})
	})
}

var links atomic.Int64

// newLink creates a Link named name-N, N unique in the suite, and returns
// it as its clicks are counted. The Writer needs nothing else of it: no
// Domain, no controller.
func newLink(t *testing.T, name string) Link {
	t.Helper()
	n := links.Add(1)
	l := &kurzv1alpha1.Link{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("%s-%d", name, n)},
		Spec: kurzv1alpha1.LinkSpec{Domain: "clicks.test", Key: fmt.Sprintf("k%d", n), URL: "https://dest.example/"}}
	NewWithT(t).Expect(k8s.Create(context.Background(), l)).To(Succeed())
	return Link{UID: l.UID, Namespace: ns, Name: l.Name}
}

// counted returns a new Link (see newLink), a Counter of it, and a Writer
// of that Counter's queue writing with c and settling with live (at 100
// QPS), for tests that run the Writer's flush rounds themselves.
func counted(t *testing.T, name string, c client.Client, live client.Reader) (Link, *Counter, *Writer) {
	t.Helper()
	l := newLink(t, name)
	q := NewQueue()
	return l, q.newCounter(l), newWriter(q, c, live, 100)
}

// stored is l's status.clicks.
func stored(t *testing.T, l Link) int64 {
	t.Helper()
	var o kurzv1alpha1.Link
	NewWithT(t).Expect(k8s.Get(context.Background(), l.key(), &o)).To(Succeed())
	return o.Status.Clicks
}

// storedOf polls the status.clicks of ls.
func storedOf(t *testing.T, ls ...Link) func() []int64 {
	return func() []int64 {
		out := make([]int64, len(ls))
		for i, l := range ls {
			out[i] = stored(t, l)
		}
		return out
	}
}

func testOptions() Options {
	o := DefaultOptions()
	o.FlushInterval = 200 * time.Millisecond
	o.FlushQPS = 500
	return o
}

// index stands in for the redirect index: a Slot per Link, made at its
// first click (the real one makes it with the Link's Entry), whose
// Counters Replay fills.
type index struct {
	q     *Queue
	mu    sync.Mutex
	slots map[types.UID]*Slot
}

func newIndex() *index { return &index{q: NewQueue(), slots: map[types.UID]*Slot{}} }

func (ix *index) slot(l Link) *Slot {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	s := ix.slots[l.UID]
	if s == nil {
		s = ix.q.NewSlot(l.UID)
		ix.slots[l.UID] = s
	}
	return s
}

func (ix *index) counterFor(l Link) *Counter { return ix.slot(l).Counter(l) }

// click counts n clicks of l, now.
func (ix *index) click(l Link, n int) {
	s := ix.slot(l)
	for range n {
		s.Click(&l, time.Now().UnixNano())
	}
}

// replica is a Writer run as the redirect server runs it: New, Replay,
// Run in the background; stop ends Run and calls Finish, as the server
// does once it drained.
type replica struct {
	*Writer
	ix   *index
	stop func()
}

// start starts a replica talking to kube-apiserver through p (nil: directly)
// with an index of its own.
func start(t *testing.T, o Options, p *apiproxy.Proxy) *replica {
	t.Helper()
	g := NewWithT(t)
	ix := newIndex()
	c := k8s
	var live client.Reader = k8s
	if p != nil {
		pc := p.Client(t)
		c, live = cachedReads{Client: pc, cache: k8s}, pc
	}
	w, err := New(o, ix.q, c, live, ix.counterFor)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(w.Replay(context.Background())).To(Succeed())
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		w.Run(ctx)
	}()
	var once sync.Once
	stop := func() {
		once.Do(func() {
			cancel()
			<-done
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			g.Expect(w.Finish(ctx)).To(Succeed())
		})
	}
	t.Cleanup(stop)
	return &replica{Writer: w, ix: ix, stop: stop}
}

// cachedReads writes through its Client and reads from cache, as the
// manager's client does from its informers' cache: those reads keep
// answering while kube-apiserver is cut off (here they bypass the proxy).
type cachedReads struct {
	client.Client
	cache client.Reader
}

func (c cachedReads) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	return c.cache.Get(ctx, key, obj, opts...)
}

// Click counts one click of a Counter at now (unix nanoseconds), as a
// Slot's click does: the tests' Counters have no Slot.
func (c *Counter) Click(now int64) {
	if c.add(now) {
		c.q.push(c)
	}
}
