package main

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/kurz-dev/kurz/hack/internal/procstat"
	"github.com/kurz-dev/kurz/internal/devenv"
)

// settleCost is where the settle's time went: the CPU each process used
// while the controllers settled, and the requests kube-apiserver served
// for them. On a machine whose cores every process shares, a settle is
// bounded by their CPU per Link, so these figures, unlike the wall time,
// hardly depend on what else the machine runs.
type settleCost struct {
	pids    map[string]int // kurz, kube-apiserver, etcd, bench-scale
	cpu0    map[string]float64
	cpu     map[string]float64 // CPU seconds used during the settle
	writes0 map[string]float64
	writes  map[string]float64 // link requests by verb, subresource and code
	cfg     *rest.Config
	// reconciles are the Link controller's reconciles by result, from
	// kurz's own metrics: more than one per Link means wasted passes.
	reconciles map[string]float64
	metrics    string
}

// startSettleCost samples every process's CPU and kube-apiserver's request
// counters when the manager starts.
func startSettleCost(ctx context.Context, env *devenv.Env, m *managerProc) *settleCost {
	etcd, api := env.PIDs()
	s := &settleCost{
		pids:    map[string]int{"kurz": m.cmd.Process.Pid, "kube-apiserver": api, "etcd": etcd, "bench-scale": os.Getpid()},
		cfg:     env.Config(),
		metrics: "http://" + m.metrics + "/metrics",
	}
	s.cpu0 = s.sampleCPU()
	s.writes0, _ = linkRequests(ctx, s.cfg)
	return s
}

func (s *settleCost) sampleCPU() map[string]float64 {
	out := map[string]float64{}
	for name, pid := range s.pids {
		out[name] = procstat.CPUSeconds(pid)
	}
	return out
}

// finish samples again when the controllers settled.
func (s *settleCost) finish(ctx context.Context) {
	s.cpu = s.sampleCPU()
	for k, v := range s.cpu0 {
		s.cpu[k] -= v
	}
	if s.metrics != "" { // empty with no manager (-status-floor)
		s.reconciles = linkReconciles(ctx, s.metrics)
	}
	w, err := linkRequests(ctx, s.cfg)
	if err != nil {
		logf("kube-apiserver metrics: %v", err)
		return
	}
	for k, v := range s.writes0 {
		w[k] -= v
	}
	s.writes = w
}

// print writes the table rows, per Link where that reads better: n is the
// Links reconciled (all of them, or those done when -settle-timeout ran out).
func (s *settleCost) print(p func(k, v string), n int) {
	if s == nil || s.cpu == nil {
		return
	}
	total := 0.0
	var parts []string
	for _, name := range []string{"kube-apiserver", "etcd", "kurz", "bench-scale"} {
		if _, ok := s.pids[name]; !ok {
			continue
		}
		total += s.cpu[name]
		parts = append(parts, fmt.Sprintf("%s %.0f", name, s.cpu[name]))
	}
	p("CPU-s while settling", fmt.Sprintf("%.0f (%s); %.2f ms per reconciled link", total, strings.Join(parts, ", "), total/float64(n)*1000))
	var reqs, others []string
	for k, v := range s.writes {
		if v <= 0 {
			continue
		}
		if o, ok := strings.CutPrefix(k, "other "); ok {
			others = append(others, fmt.Sprintf("%s %.0f", o, v))
		} else {
			reqs = append(reqs, fmt.Sprintf("%s %.0f", k, v))
		}
	}
	if len(reqs) > 0 {
		slices.Sort(reqs)
		p("link requests while settling", strings.Join(reqs, ", "))
	}
	if len(others) > 0 {
		slices.Sort(others)
		p("other requests while settling (resource, verb, code)", strings.Join(others, ", "))
	}
	var recs []string
	for k, v := range s.reconciles {
		recs = append(recs, fmt.Sprintf("%s %.0f", k, v))
	}
	if len(recs) > 0 {
		slices.Sort(recs)
		p("Link reconciles until settled", strings.Join(recs, ", "))
	}
}

// linkReconciles reads controller_runtime_reconcile_total of the Link
// controller from kurz's metrics, by result.
func linkReconciles(ctx context.Context, url string) map[string]float64 {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		logf("kurz metrics: %v", err)
		return nil
	}
	defer func() { _ = resp.Body.Close() }()
	out := map[string]float64{}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		after, found := strings.CutPrefix(sc.Text(), "controller_runtime_reconcile_total{")
		labels, value, ok := strings.Cut(after, "} ")
		if !found || !ok {
			continue
		}
		l := parseLabels(labels)
		if l["controller"] != "link" {
			continue
		}
		if v, err := strconv.ParseFloat(value, 64); err == nil && v > 0 {
			out[l["result"]] = v
		}
	}
	return out
}

// linkRequests reads kube-apiserver's apiserver_request_total: for links
// every verb but the watch and list of informers, keyed "VERB subresource
// code"; for every other resource every verb but WATCH, keyed "resource
// VERB subresource code" with an "other " prefix (what else a settle asks
// of kube-apiserver: leases, events, reviews).
func linkRequests(ctx context.Context, cfg *rest.Config) (map[string]float64, error) {
	rc, err := rawClient(cfg)
	if err != nil {
		return nil, err
	}
	body, err := rc.Get().AbsPath("/metrics").DoRaw(ctx)
	if err != nil {
		return nil, err
	}
	out := map[string]float64{}
	sc := bufio.NewScanner(strings.NewReader(string(body)))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		after, found := strings.CutPrefix(sc.Text(), "apiserver_request_total{")
		labels, value, ok := strings.Cut(after, "} ")
		if !found || !ok {
			continue
		}
		l := parseLabels(labels)
		v, err := strconv.ParseFloat(value, 64)
		if err != nil || l["verb"] == "WATCH" {
			continue
		}
		var key string
		switch {
		case l["resource"] != "links":
			key = fmt.Sprintf("other %s %s %s %s", l["resource"], l["verb"], l["subresource"], l["code"])
		case l["verb"] == "LIST":
			continue
		default:
			key = fmt.Sprintf("%s %s %s", l["verb"], l["subresource"], l["code"])
		}
		out[strings.Join(strings.Fields(key), " ")] += v
	}
	return out, sc.Err()
}

// parseLabels splits a{x="1",y="2"}'s inside into a map.
func parseLabels(s string) map[string]string {
	out := map[string]string{}
	for s != "" {
		k, tail, ok := strings.Cut(s, `="`)
		if !ok {
			break
		}
		v, tail, _ := strings.Cut(tail, `"`)
		out[k] = v
		s = strings.TrimPrefix(tail, ",")
	}
	return out
}

// rawClient is a REST client for kube-apiserver's paths outside the API
// groups (/metrics, /debug/pprof).
func rawClient(cfg *rest.Config) (rest.Interface, error) {
	cs, err := kubernetes.NewForConfig(rest.CopyConfig(cfg))
	if err != nil {
		return nil, err
	}
	return cs.Discovery().RESTClient(), nil
}

// startAPIServerProfile takes a CPU profile of kube-apiserver (its
// /debug/pprof, open to the admin) for d, starting after delay, into path,
// and returns a function that waits for it and returns `go tool pprof
// -top` of it.
func startAPIServerProfile(ctx context.Context, env *devenv.Env, delay, d time.Duration, path string) func() string {
	return profileLater(ctx, delay, "kube-apiserver profile", path, func() error {
		rc, err := rawClient(env.Config())
		if err != nil {
			return err
		}
		body, err := rc.Get().AbsPath("/debug/pprof/profile").Param("seconds", strconv.Itoa(int(d.Seconds()))).
			Timeout(d + time.Minute).DoRaw(ctx)
		if err != nil {
			return err
		}
		logf("kube-apiserver CPU profile in %s", path)
		return os.WriteFile(path, body, 0o644)
	})
}

// profilePath names a profile in the output directory.
func profilePath(c config, name string) string { return filepath.Join(c.outDir, name) }
