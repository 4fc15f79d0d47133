package manager

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/uuid"
	"k8s.io/client-go/kubernetes"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
	"k8s.io/client-go/tools/record"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
)

// leaderGauge is 1 while this replica leads (runs the controllers).
var leaderGauge = prometheus.NewGauge(prometheus.GaugeOpts{
	Name: "kurz_leader",
	Help: "1 while this replica holds the leader Lease and runs the controllers, else 0.",
})

var registerLeaderGauge sync.Once

// leader is a runnable of every replica (it needs no election itself): it
// campaigns for the Lease and, while it holds it, runs a fresh set of
// controllers on the manager's shared cache. Losing the Lease stops those
// controllers and nothing else; it then campaigns again. controller-runtime's
// own election would end the whole process instead, servers included.
type leader struct {
	lock     resourcelock.Interface
	o        Options
	build    func() ([]manager.Runnable, error)
	events   record.EventBroadcaster
	identity string

	// first is the set built (and so validated) by New, used for the first
	// term; later terms build their own: a controller starts only once.
	first []manager.Runnable

	// term is held while a term's controllers run, so the next term's
	// start only after the last one's have stopped.
	term sync.Mutex
}

func newLeader(cfg *rest.Config, o Options, build func() ([]manager.Runnable, error)) (*leader, error) {
	first, err := build()
	if err != nil {
		return nil, err
	}
	ns := o.LeaderElectionNamespace
	if ns == "" {
		if ns, err = podNamespace(); err != nil {
			return nil, err
		}
	}
	host, err := os.Hostname()
	if err != nil {
		return nil, fmt.Errorf("leader election identity: %w", err)
	}
	identity := host + "_" + string(uuid.NewUUID())

	cfg = rest.AddUserAgent(rest.CopyConfig(cfg), "kurz-leader-election")
	// A frozen kube-apiserver keeps connections open: without a timeout a
	// campaign's request could hang until it wakes up. No single request
	// may outlast the renew deadline anyway.
	cfg.Timeout = o.RenewDeadline
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("leader election client: %w", err)
	}
	// Transitions are announced as core/v1 Events on the Lease, as
	// controller-runtime's election did.
	events := record.NewBroadcaster()
	lock, err := resourcelock.New(resourcelock.LeasesResourceLock, ns, o.LeaderElectionID,
		cs.CoreV1(), cs.CoordinationV1(), resourcelock.ResourceLockConfig{
			Identity:      identity,
			EventRecorder: events.NewRecorder(Scheme, corev1.EventSource{Component: identity}),
		})
	if err != nil {
		return nil, fmt.Errorf("leader election lock: %w", err)
	}
	events.StartRecordingToSink(&typedcorev1.EventSinkImpl{Interface: cs.CoreV1().Events(ns)})
	registerLeaderGauge.Do(func() { metrics.Registry.MustRegister(leaderGauge) })
	return &leader{lock: lock, o: o, build: build, events: events, identity: identity, first: first}, nil
}

// podNamespace is the namespace kurz runs in, as controller-runtime finds it.
func podNamespace() (string, error) {
	b, err := os.ReadFile("/var/run/secrets/kubernetes.io/serviceaccount/namespace")
	if err != nil {
		return "", fmt.Errorf("leader election needs --leader-election-namespace outside a cluster: %w", err)
	}
	return strings.TrimSpace(string(b)), nil
}

// NeedLeaderElection is false: every replica campaigns.
func (*leader) NeedLeaderElection() bool { return false }

// Start campaigns until ctx is done, one term after another. It returns an
// error only when a term's controllers cannot be built.
func (l *leader) Start(ctx context.Context) error {
	defer l.events.Shutdown()
	log := ctrl.LoggerFrom(ctx).WithName("leader").WithValues("identity", l.identity, "lease", l.lock.Describe())
	ctx = ctrl.LoggerInto(ctx, log)
	for ctx.Err() == nil {
		if err := l.campaign(ctx); err != nil {
			return err
		}
	}
	// Wait for the last term's controllers; a term that has not begun yet
	// sees ctx done and starts none.
	l.term.Lock()
	defer l.term.Unlock()
	return nil
}

// campaign waits for the Lease, runs the controllers while it holds it and
// returns once it no longer does (lost, given up, or ctx done). On ctx done
// the controllers stop before the Lease is released, so the next leader's
// never overlap this one's.
func (l *leader) campaign(ctx context.Context) error {
	log := ctrl.LoggerFrom(ctx)
	electCtx, stopElecting := context.WithCancel(context.WithoutCancel(ctx))
	defer stopElecting()

	var (
		mu      sync.Mutex
		leading bool  // a term began: it, not the watcher below, stops electing
		fatal   error // the term could not build its controllers
	)
	elector, err := leaderelection.NewLeaderElector(leaderelection.LeaderElectionConfig{
		Lock:            l.lock,
		Name:            l.o.LeaderElectionID,
		LeaseDuration:   l.o.LeaseDuration,
		RenewDeadline:   l.o.RenewDeadline,
		RetryPeriod:     l.o.RetryPeriod,
		ReleaseOnCancel: true,
		Callbacks: leaderelection.LeaderCallbacks{
			OnStartedLeading: func(leadCtx context.Context) {
				defer stopElecting() // however the term ends, give the Lease up
				mu.Lock()
				if ctx.Err() != nil {
					mu.Unlock()
					return
				}
				leading = true
				mu.Unlock()
				if err := l.lead(ctx, leadCtx); err != nil {
					mu.Lock()
					fatal = err
					mu.Unlock()
				}
			},
			OnStoppedLeading: func() {},
		},
	})
	if err != nil {
		return fmt.Errorf("leader election: %w", err)
	}
	go func() {
		select {
		case <-electCtx.Done():
		case <-ctx.Done():
			mu.Lock()
			if !leading {
				stopElecting() // stop campaigning
			}
			mu.Unlock()
		}
	}()
	log.Info("campaigning for the leader Lease")
	elector.Run(electCtx)
	mu.Lock()
	defer mu.Unlock()
	return fatal
}

// lead runs one term: fresh controllers until leadCtx (the Lease is lost)
// or ctx (shutdown) is done, or one of them fails. The set from
// controllers.New removes the event handlers it added to the shared
// informers when runCtx ends, so terms do not pile them up. Only a failure to build
// them is returned: a controller that fails ends the term, and the replica
// campaigns again.
func (l *leader) lead(ctx, leadCtx context.Context) error {
	l.term.Lock()
	defer l.term.Unlock()
	log := ctrl.LoggerFrom(ctx)
	runCtx, cancel := context.WithCancel(leadCtx)
	defer cancel()
	stop := context.AfterFunc(ctx, cancel)
	defer stop()
	if runCtx.Err() != nil {
		return nil // the term ended before it began
	}

	runnables := l.first
	l.first = nil
	if runnables == nil {
		var err error
		if runnables, err = l.build(); err != nil {
			return fmt.Errorf("build controllers: %w", err)
		}
	}
	log.Info("leading: starting the controllers")
	leaderGauge.Set(1)
	defer leaderGauge.Set(0)

	errs := make(chan error, len(runnables))
	for _, r := range runnables {
		go func() {
			err := r.Start(runCtx)
			if err != nil {
				cancel() // one failed: end the term
			}
			errs <- err
		}()
	}
	var failed []error
	for range runnables {
		if err := <-errs; err != nil {
			failed = append(failed, err)
		}
	}
	switch {
	case len(failed) > 0:
		log.Error(errors.Join(failed...), "controllers failed; giving up the Lease and campaigning again")
	case ctx.Err() != nil:
		log.Info("shutting down: controllers stopped, releasing the Lease")
	default:
		log.Info("lost the leader Lease: controllers stopped, still serving; campaigning again")
	}
	return nil
}
