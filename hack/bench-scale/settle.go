package main

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"

	kurzv1alpha1 "github.com/kurz-dev/kurz/api/v1alpha1"
	"github.com/kurz-dev/kurz/internal/devenv"
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

// waitSettled watches every Link until all are reconciled, timing from
// the manager's start. The watch starts only once the manager serves, so
// its initial list does not compete with the manager's.
func waitSettled(ctx context.Context, c config, env *devenv.Env, m *managerProc, r *results) error {
	cfg := env.Config()
	cfg.QPS = -1
	ca, err := cache.New(cfg, cache.Options{
		Scheme: scheme,
		// Only status and generation are read: drop the rest.
		DefaultTransform: func(o any) (any, error) {
			if l, ok := o.(*kurzv1alpha1.Link); ok {
				l.ManagedFields, l.Annotations = nil, nil
				l.Spec = kurzv1alpha1.LinkSpec{}
			}
			return o, nil
		},
	})
	if err != nil {
		return err
	}
	var mu sync.Mutex
	state := map[string]settledState{}
	nSettled, nReady := 0, 0
	var doneAt time.Duration
	done := make(chan struct{})
	update := func(o any, gone bool) {
		l, ok := o.(*kurzv1alpha1.Link)
		if !ok {
			return
		}
		mu.Lock()
		defer mu.Unlock()
		old := state[l.Name]
		now := settledState{}
		if !gone {
			now = stateOf(l)
			state[l.Name] = now
		} else {
			delete(state, l.Name)
		}
		nSettled += b2i(now.settled) - b2i(old.settled)
		nReady += b2i(now.ready) - b2i(old.ready)
		if doneAt == 0 && nSettled >= c.n {
			doneAt = time.Since(m.started)
			close(done)
		}
	}
	inf, err := ca.GetInformer(ctx, &kurzv1alpha1.Link{})
	if err != nil {
		return err
	}
	if _, err := inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc:    func(o any) { update(o, false) },
		UpdateFunc: func(_, o any) { update(o, false) },
		DeleteFunc: func(o any) { update(o, true) },
	}); err != nil {
		return err
	}
	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() { _ = ca.Start(cctx) }()
	tick := time.NewTicker(30 * time.Second)
	defer tick.Stop()
	deadline := time.After(c.settle)
	for {
		select {
		case <-done:
			mu.Lock()
			r.first.settled, r.first.settledReadyOK = doneAt, nReady
			mu.Unlock()
			r.first.settledRSS, _ = procStatus(m.cmd.Process.Pid)
			r.first.loadAtSettled = uptime()
			logf("settled after %s", r.first.settled.Round(time.Second))
			return nil
		case <-tick.C:
			mu.Lock()
			logf("%d of %d Links reconciled (%d Ready)", nSettled, c.n, nReady)
			mu.Unlock()
			if m.exited() {
				return errors.New("kurz manager exited; see its log")
			}
		case <-deadline:
			return fmt.Errorf("not settled within %s", c.settle)
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
