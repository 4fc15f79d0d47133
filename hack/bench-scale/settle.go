package main

import (
	"context"
	"errors"
	"runtime"
	"runtime/debug"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kruntime "k8s.io/apimachinery/pkg/runtime"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"

	kurzv1alpha1 "github.com/kurz-dev/kurz/api/v1alpha1"
	"github.com/kurz-dev/kurz/internal/devenv"
	"github.com/kurz-dev/kurz/internal/longwatch"
)

// settledState tells whether a Link is reconciled: status caught up with
// its generation and a Ready condition written.
type settledState struct{ settled, ready bool }

func stateOf(l *kurzv1alpha1.Link) settledState {
	c := meta.FindStatusCondition(l.Status.Conditions, "Ready")
	return settledState{
		settled: c != nil && l.Status.ObservedGeneration == l.Generation,
		ready:   c != nil && c.Status == metav1.ConditionTrue,
	}
}

// watcher counts reconciled Links from an informer of its own. It starts
// before the manager and waits for its initial list: that also makes sure
// kube-apiserver's watch cache is filled (as on a cluster that has been
// running), so the manager's start is timed alone.
type watcher struct {
	mu               sync.Mutex
	state            map[string]settledState
	nSettled, nReady int
	want             int
	started          time.Time // the manager's start; zero before
	doneAt           time.Duration
	done             chan struct{}
	cancel           context.CancelFunc
}

// linkCache is a cache of the tool's own, without a client-side rate
// limit, that drops what no measurement reads of a Link (managedFields,
// annotations, and whatever trim clears). Its watches last hours, as a
// replica's do (internal/longwatch): with client-go's 5 to 10 minutes, the
// settle watcher, listed before minutes of floor reads, watched again from
// a revision etcd had compacted and listed every Link again during the
// start it timed (docs/scaling.md).
func linkCache(env *devenv.Env, trim func(*kurzv1alpha1.Link)) (cache.Cache, error) {
	cfg := env.Config()
	cfg.QPS = -1
	return cache.New(cfg, cache.Options{
		Scheme: scheme,
		NewInformer: func(lw toolscache.ListerWatcher, obj kruntime.Object, resync time.Duration, indexers toolscache.Indexers) toolscache.SharedIndexInformer {
			return toolscache.NewSharedIndexInformer(longwatch.Wrap(lw), obj, resync, indexers)
		},
		DefaultTransform: func(o any) (any, error) {
			if l, ok := o.(*kurzv1alpha1.Link); ok {
				l.ManagedFields, l.Annotations = nil, nil
				trim(l)
			}
			return o, nil
		},
	})
}

func startWatcher(ctx context.Context, c config, env *devenv.Env) (*watcher, error) {
	// Only status and generation are read: drop the spec too.
	ca, err := linkCache(env, func(l *kurzv1alpha1.Link) { l.Spec = kurzv1alpha1.LinkSpec{} })
	if err != nil {
		return nil, err
	}
	w := &watcher{state: map[string]settledState{}, want: c.n, done: make(chan struct{})}
	inf, err := ca.GetInformer(ctx, &kurzv1alpha1.Link{})
	if err != nil {
		return nil, err
	}
	if _, err := inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc:    func(o any) { w.update(o, false) },
		UpdateFunc: func(_, o any) { w.update(o, false) },
		DeleteFunc: func(o any) { w.update(o, true) },
	}); err != nil {
		return nil, err
	}
	cctx, cancel := context.WithCancel(ctx)
	w.cancel = cancel
	go func() { _ = ca.Start(cctx) }()
	start := time.Now()
	if !ca.WaitForCacheSync(ctx) {
		cancel()
		return nil, errors.New("the Link informer did not sync")
	}
	logf("watch cache warm: listed the Links in %s", time.Since(start).Round(100*time.Millisecond))
	return w, nil
}

func (w *watcher) stop() { w.cancel() }

// release stops the watcher and lets its cache and state go, then
// collects them: the API's figures that follow are timed by this process,
// and a collection of its own 100 000 Links would be in them.
func (w *watcher) release() {
	w.cancel()
	w.mu.Lock()
	w.state = nil
	w.mu.Unlock()
	runtime.GC()
	debug.FreeOSMemory()
}

// from starts the clock: settling is timed from the manager's start.
func (w *watcher) from(t time.Time) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.started = t
}

func (w *watcher) update(o any, gone bool) {
	l, ok := o.(*kurzv1alpha1.Link)
	if !ok {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.state == nil { // released
		return
	}
	old := w.state[l.Name]
	now := settledState{}
	if !gone {
		now = stateOf(l)
		w.state[l.Name] = now
	} else {
		delete(w.state, l.Name)
	}
	w.nSettled += b2i(now.settled) - b2i(old.settled)
	w.nReady += b2i(now.ready) - b2i(old.ready)
	if w.doneAt == 0 && !w.started.IsZero() && w.nSettled >= w.want {
		w.doneAt = time.Since(w.started)
		close(w.done)
	}
}

// waitSettled waits until every Link is reconciled; m is nil when no
// manager runs (-status-floor).
func (w *watcher) waitSettled(ctx context.Context, c config, m *managerProc, r *results) error {
	w.mu.Lock()
	if w.doneAt == 0 && w.nSettled >= w.want { // settled before the clock started
		w.doneAt = time.Since(w.started)
		close(w.done)
	}
	w.mu.Unlock()
	tick := time.NewTicker(30 * time.Second)
	defer tick.Stop()
	deadline := time.After(c.settle)
	for {
		select {
		case <-w.done:
			w.mu.Lock()
			r.first.settled, r.first.settledReadyOK = w.doneAt, w.nReady
			w.mu.Unlock()
			if m != nil {
				r.first.settledRSS, r.first.settlePeakRSS = procStatus(m.cmd.Process.Pid)
				r.first.settledAnon, r.first.settledFile = rssParts(m.cmd.Process.Pid)
			}
			r.first.settledAt = time.Now()
			r.first.loadAtSettled = uptime()
			logf("settled after %s", r.first.settled.Round(time.Second))
			return nil
		case <-tick.C:
			w.mu.Lock()
			logf("%d of %d Links reconciled (%d Ready)", w.nSettled, c.n, w.nReady)
			w.mu.Unlock()
			if m != nil && m.exited() {
				return errors.New("kurz manager exited; see its log")
			}
		case <-deadline:
			// Measure the rest anyway: the table says how far it got.
			w.mu.Lock()
			r.first.settledReadyOK, r.first.unsettled = w.nReady, w.want-w.nSettled
			w.mu.Unlock()
			r.first.settled = c.settle
			if m != nil {
				r.first.settledRSS, r.first.settlePeakRSS = procStatus(m.cmd.Process.Pid)
			}
			r.first.loadAtSettled = uptime()
			logf("not settled within %s", c.settle)
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}
