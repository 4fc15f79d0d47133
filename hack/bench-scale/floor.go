package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kurzv1alpha1 "github.com/kurz-dev/kurz/api/v1alpha1"
	"github.com/kurz-dev/kurz/internal/devenv"
)

// statusFloor is -status-floor: the control plane's share of a settle, with
// no manager. bench-scale itself writes every Link's status once, the JSON
// merge patch the Link controller's first pass sends (Ready, the short URL,
// the timestamps, under the Link's resourceVersion), from -floor-workers
// goroutines without a client-side rate limit, while two informers watch
// Links as in a real settle: the one that counts settled Links, and one in
// place of the manager's. No controller that writes one status per Link
// settles N Links faster on this machine than this, nor with less
// kube-apiserver and etcd CPU per Link.
func statusFloor(ctx context.Context, c config, env *devenv.Env, out io.Writer) error {
	w, err := startWatcher(ctx, c, env)
	if err != nil {
		return err
	}
	defer w.stop()
	links, stopStandIn, err := startStandIn(ctx, env)
	if err != nil {
		return err
	}
	defer stopStandIn()
	cfg := env.Config()
	cfg.QPS = -1
	cl, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		return err
	}
	etcdPID, apiPID := env.PIDs()
	cost := &settleCost{
		pids: map[string]int{"kube-apiserver": apiPID, "etcd": etcdPID, "bench-scale": os.Getpid()},
		cfg:  cfg,
	}
	cost.cpu0 = cost.sampleCPU()
	cost.writes0, _ = linkRequests(ctx, cfg)
	load := uptime()
	start := time.Now()
	w.from(start)
	logf("writing the status of %d Links with %d workers", len(links), c.floorWorkers)
	failed := patchAll(ctx, cl, links, c.floorWorkers, start)
	r := &results{n: c.n}
	if err := w.waitSettled(ctx, c, nil, r); err != nil {
		return err
	}
	cost.finish(ctx)
	settled := fmt.Sprintf("%s (load %s; %d Ready)", secs(r.first.settled), r.first.loadAtSettled, r.first.settledReadyOK)
	if r.first.unsettled > 0 {
		settled = fmt.Sprintf("not within %s: %d unsettled", secs(c.settle), r.first.unsettled)
	}
	api, _ := procStatus(apiPID)
	etcd, _ := procStatus(etcdPID)
	p := func(k, v string) { fmt.Fprintf(out, "| %s | %s |\n", k, v) }
	fmt.Fprintf(out, "\n| %d Links, the control plane's floor (no manager) | measured |\n|---|---|\n", c.n)
	p("status writes (PATCH, one per Link)", fmt.Sprintf("%d Links with %d workers, %d failed", len(links), c.floorWorkers, failed))
	p("load average at the start", load)
	p("every Link settled", settled)
	p("kube-apiserver / etcd RSS", fmt.Sprintf("%s / %s", mib(api), mib(etcd)))
	cost.print(p, c.n-r.first.unsettled)
	if failed > 0 {
		return fmt.Errorf("%d status writes failed", failed)
	}
	return nil
}

// floorLink is what a status write needs of a Link.
type floorLink struct {
	name, namespace, resourceVersion string
	generation                       int64
	shortURL                         string
}

// startStandIn starts the informer that stands in for the manager's (it
// decodes every event, as the manager's does, and keeps only what a status
// write needs) and returns the Links it listed.
func startStandIn(ctx context.Context, env *devenv.Env) ([]floorLink, func(), error) {
	ca, err := linkCache(env, func(*kurzv1alpha1.Link) {})
	if err != nil {
		return nil, nil, err
	}
	if _, err := ca.GetInformer(ctx, &kurzv1alpha1.Link{}); err != nil {
		return nil, nil, err
	}
	cctx, cancel := context.WithCancel(ctx)
	go func() { _ = ca.Start(cctx) }()
	if !ca.WaitForCacheSync(ctx) {
		cancel()
		return nil, nil, errors.New("the stand-in Link informer did not sync")
	}
	var list kurzv1alpha1.LinkList
	if err := ca.List(ctx, &list); err != nil {
		cancel()
		return nil, nil, err
	}
	links := make([]floorLink, 0, len(list.Items))
	for i := range list.Items {
		l := &list.Items[i]
		if stateOf(l).settled {
			cancel()
			return nil, nil, fmt.Errorf("link %s/%s is settled already: -status-floor needs Links no controller has written (a copy of a -load-only directory)", l.Namespace, l.Name)
		}
		links = append(links, floorLink{
			name: l.Name, namespace: l.Namespace, resourceVersion: l.ResourceVersion,
			generation: l.Generation, shortURL: l.ShortURL(),
		})
	}
	return links, cancel, nil
}

// patchAll writes each Link's status once from workers goroutines and
// returns how many writes failed.
func patchAll(ctx context.Context, cl client.Client, links []floorLink, workers int, now time.Time) int {
	var next, failed atomic.Int64
	var wg sync.WaitGroup
	for range max(workers, 1) {
		wg.Go(func() {
			for {
				i := int(next.Add(1) - 1)
				if i >= len(links) || ctx.Err() != nil {
					return
				}
				if err := patchStatus(ctx, cl, &links[i], now); err != nil {
					if failed.Add(1) <= 3 {
						logf("status of %s: %v", links[i].name, err)
					}
				}
			}
		})
	}
	wg.Wait()
	return int(failed.Load())
}

// patchStatus sends the merge patch of the Link controller's first pass:
// status from nothing to Active, under the resourceVersion it read.
func patchStatus(ctx context.Context, cl client.Client, l *floorLink, now time.Time) error {
	at := metav1.NewMicroTime(now)
	st := kurzv1alpha1.LinkStatus{
		ShortURL: l.shortURL, ObservedGeneration: l.generation,
		CreatedAt: &at, UpdatedAt: &at, UpdatedGeneration: l.generation,
	}
	meta.SetStatusCondition(&st.Conditions, metav1.Condition{
		Type: kurzv1alpha1.ConditionReady, Status: metav1.ConditionTrue, Reason: kurzv1alpha1.ReasonActive,
		Message: "The link serves " + l.shortURL, ObservedGeneration: l.generation,
	})
	body, err := json.Marshal(map[string]any{
		"metadata": map[string]string{"resourceVersion": l.resourceVersion},
		"status":   st,
	})
	if err != nil {
		return err
	}
	obj := &kurzv1alpha1.Link{ObjectMeta: metav1.ObjectMeta{Name: l.name, Namespace: l.namespace}}
	return cl.Status().Patch(ctx, obj, client.RawPatch(types.MergePatchType, body))
}
