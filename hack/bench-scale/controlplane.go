package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kurzv1alpha1 "github.com/kurz-dev/kurz/api/v1alpha1"
	"github.com/kurz-dev/kurz/internal/devenv"
)

// -control-plane-only measures what the Links cost kube-apiserver and etcd
// with the watch cache for Links on or off (-links-watch-cache), with no
// manager running: their RSS, etcd's database size, and the latency of the
// requests a kurz replica and kubectl make.

// rssSampler follows the RSS of kube-apiserver and etcd, so that a peak (or
// the size reached before an OOM kill) is known.
type rssSampler struct {
	mu                sync.Mutex
	apiMax, etcdMax   int64
	apiLast, etcdLast int64
	stop              chan struct{}
	done              chan struct{}
}

func sampleRSS(env *devenv.Env, every time.Duration) *rssSampler {
	s := &rssSampler{stop: make(chan struct{}), done: make(chan struct{})}
	etcdPID, apiPID := env.PIDs()
	go func() {
		defer close(s.done)
		tick := time.NewTicker(every)
		defer tick.Stop()
		logged := time.Now()
		for {
			api, _ := procStatus(apiPID)
			etcd, _ := procStatus(etcdPID)
			s.mu.Lock()
			s.apiLast, s.etcdLast = api, etcd
			s.apiMax, s.etcdMax = max(s.apiMax, api), max(s.etcdMax, etcd)
			s.mu.Unlock()
			if time.Since(logged) >= 30*time.Second {
				logf("RSS kube-apiserver %s, etcd %s (load %s)", mib(api), mib(etcd), uptime())
				logged = time.Now()
			}
			select {
			case <-s.stop:
				return
			case <-tick.C:
			}
		}
	}()
	return s
}

func (s *rssSampler) end() {
	close(s.stop)
	<-s.done
}

func (s *rssSampler) now() (api, etcd int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.apiLast, s.etcdLast
}

func (s *rssSampler) peak() (api, etcd int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.apiMax, s.etcdMax
}

// timed runs f n times and returns p50 and p99 (one sample: that one).
func timed(n int, f func() error) (p50, p99 time.Duration, err error) {
	lat := make([]time.Duration, 0, n)
	for range n {
		start := time.Now()
		if err := f(); err != nil {
			return 0, 0, err
		}
		lat = append(lat, time.Since(start))
	}
	slices.Sort(lat)
	return pctl(lat, 0.5), pctl(lat, 0.99), nil
}

// etcdDBSize reads etcd's database size and the part of it in use from its
// metrics.
func etcdDBSize(ctx context.Context, etcdURL string) (total, inUse int64) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, etcdURL+"/metrics", nil)
	if err != nil {
		return 0, 0
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, 0
	}
	defer func() { _ = resp.Body.Close() }()
	sc := bufio.NewScanner(io.LimitReader(resp.Body, 16<<20))
	for sc.Scan() {
		name, v, ok := strings.Cut(sc.Text(), " ")
		if !ok {
			continue
		}
		f, _ := strconv.ParseFloat(v, 64)
		switch name {
		case "etcd_mvcc_db_total_size_in_bytes":
			total = int64(f)
		case "etcd_mvcc_db_total_size_in_use_in_bytes":
			inUse = int64(f)
		}
	}
	return total, inUse
}

func measureControlPlane(ctx context.Context, c config, env *devenv.Env, w io.Writer) error {
	etcdPID, apiPID := env.PIDs()
	apiStart, _ := procStatus(apiPID)
	etcdStart, _ := procStatus(etcdPID)
	loadStart := uptime()
	s := sampleRSS(env, 2*time.Second)
	defer s.end()
	cl, err := newClient(env)
	if err != nil {
		return err
	}
	type row struct{ k, v string }
	var rows []row
	add := func(k, format string, args ...any) {
		rows = append(rows, row{k, fmt.Sprintf(format, args...)})
		logf("%s: %s", k, rows[len(rows)-1].v)
	}
	add("watch cache for Links", "%s", map[bool]string{true: "on", false: "off"}[c.watchCache])
	add("kube-apiserver / etcd RSS after the start", "%s / %s (load %s)", mib(apiStart), mib(etcdStart), loadStart)

	if c.watchCache {
		// Until kube-apiserver has filled its watch cache for Links from
		// etcd, the requests the cache serves answer 429 ("storage is
		// (re)initializing"): how long the fill takes is what a restart
		// of kube-apiserver costs.
		start := time.Now()
		if err := awaitWatchCache(ctx, cl, c); err != nil {
			add("watch cache for Links filled", "not within %s (load %s): %v", c.serveTimeout, uptime(), err)
		} else {
			add("watch cache for Links filled", "%s (load %s)", secs(time.Since(start)), uptime())
		}
		api, etcd := s.now()
		add("kube-apiserver / etcd RSS with the watch cache filled", "%s / %s", mib(api), mib(etcd))
	}
	last := benchLink(c.n-1, false)
	for _, t := range []struct {
		name string
		n    int
		f    func() error
	}{
		{"count (list, limit 1)", 20, func() error { _, err := countLinks(ctx, cl); return err }},
		{"list, first page of 500", 20, func() error {
			var l kurzv1alpha1.LinkList
			return cl.List(ctx, &l, client.InNamespace(namespace), client.Limit(500))
		}},
		{"get one Link", 50, func() error {
			var l kurzv1alpha1.Link
			return cl.Get(ctx, client.ObjectKeyFromObject(last), &l)
		}},
		// Without the watch cache, a field selector filters every Link
		// kube-apiserver reads from etcd: one sample is minutes at 1M.
		{"field-selected list (spec.key)", 1, func() error { return selectLast(ctx, cl, c.n) }},
	} {
		p50, p99, err := timed(t.n, t.f)
		if apierrors.IsTimeout(err) || apierrors.IsServerTimeout(err) {
			add(t.name, "kube-apiserver's request timeout: %v (load %s)", err, uptime())
			continue
		}
		if err != nil {
			return fmt.Errorf("%s: %w", t.name, err)
		}
		if t.n == 1 {
			add(t.name, "%s (load %s)", secs(p50), uptime())
		} else {
			add(t.name+" p50 / p99", "%.1f / %.1f ms of %d (load %s)", ms(p50), ms(p99), t.n, uptime())
		}
	}
	// The floor under a start: the same stream read and thrown away.
	sctx, cancel := context.WithTimeout(ctx, c.serveTimeout)
	d, n, err := rawWatchList(sctx, env.Config())
	cancel()
	if err != nil {
		add("watch-list of every Link read and discarded (the floor under a start)", "failed (load %s): %v", uptime(), err)
	} else {
		add("watch-list of every Link read and discarded (the floor under a start)", "%s, %d MiB (load %s)", secs(d), n>>20, uptime())
	}
	// What a replica's start costs the control plane: an informer's
	// initial sync (watch-list, from the watch cache where it is on, else
	// from etcd), last and bounded by -serve-timeout: at a million Links
	// on a busy machine it may never finish.
	sctx, cancel = context.WithTimeout(ctx, c.serveTimeout)
	start := time.Now()
	wt, err := startWatcher(sctx, c, env)
	cancel()
	if err != nil {
		add("informer sync of every Link (a replica's start)", "not within %s (load %s): %v", c.serveTimeout, uptime(), err)
	} else {
		wt.stop()
		add("informer sync of every Link (a replica's start)", "%s (load %s)", secs(time.Since(start)), uptime())
	}
	api, etcd := s.now()
	add("kube-apiserver / etcd RSS after the informer sync", "%s / %s", mib(api), mib(etcd))
	api, etcd = s.peak()
	add("kube-apiserver / etcd peak RSS (2 s samples)", "%s / %s", mib(api), mib(etcd))
	total, inUse := etcdDBSize(ctx, env.EtcdURL())
	add("etcd database size / in use", "%s / %s", mib(total), mib(inUse))

	fmt.Fprintf(w, "\n| %d Links, control plane | measured |\n|---|---|\n", c.n)
	for _, r := range rows {
		fmt.Fprintf(w, "| %s | %s |\n", r.k, r.v)
	}
	return nil
}

// awaitWatchCache polls a field-selected list, which only the watch cache
// answers while it fills, until it answers, for at most -serve-timeout.
func awaitWatchCache(ctx context.Context, cl client.Client, c config) error {
	return wait.PollUntilContextTimeout(ctx, 5*time.Second, c.serveTimeout, true, func(ctx context.Context) (bool, error) {
		err := selectLast(ctx, cl, c.n)
		if apierrors.IsTooManyRequests(err) {
			return false, nil
		}
		return err == nil, err
	})
}
