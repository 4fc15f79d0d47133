package main

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/kurz-dev/kurz/hack/internal/procstat"
)

// slowRequest is the threshold of issue 26's "p99 under 10 ms": requests
// slower than it are listed one by one, with what else happened meanwhile.
const slowRequest = 10 * time.Millisecond

// tailProbe reads, around each API figure, what could slow a request
// that its query does not explain: kurz's garbage collections, the
// TokenReviews and SubjectAccessReviews it waited on, its reconciles, and
// the CPU every process of the control plane and the machine used.
type tailProbe struct {
	ctx                   context.Context
	metrics               string // kurz's /metrics URL
	started               time.Time
	kurz, apiServer, etcd int
}

// tailSample is one reading of the probe.
type tailSample struct {
	at                             time.Time
	gcs, reviews, reconciles       float64
	kurzCPU, apiServerCPU, etcdCPU float64
	machineBusy                    float64 // CPU-seconds of every core, /proc/stat
}

func (p *tailProbe) sample() tailSample {
	s := tailSample{at: time.Now(), kurzCPU: procstat.CPUSeconds(p.kurz), apiServerCPU: procstat.CPUSeconds(p.apiServer), etcdCPU: procstat.CPUSeconds(p.etcd), machineBusy: machineBusy()}
	req, err := http.NewRequestWithContext(p.ctx, http.MethodGet, p.metrics, nil)
	if err != nil {
		return s
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return s
	}
	defer func() { _ = resp.Body.Close() }()
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		name, value, ok := strings.Cut(line, " ")
		if !ok {
			continue
		}
		if i := strings.LastIndexByte(line, ' '); i > 0 {
			value = line[i+1:]
		}
		v, err := strconv.ParseFloat(value, 64)
		if err != nil {
			continue
		}
		switch {
		case name == "go_gc_duration_seconds_count":
			s.gcs = v
		case strings.HasPrefix(name, "kurz_api_auth_reviews_total{"):
			s.reviews += v
		case strings.HasPrefix(name, "controller_runtime_reconcile_total{"):
			s.reconciles += v
		}
	}
	return s
}

// machineBusy is the CPU time every core spent on anything but idle and
// I/O wait, in seconds.
func machineBusy() float64 {
	f, err := os.Open("/proc/stat")
	if err != nil {
		return 0
	}
	defer func() { _ = f.Close() }()
	sc := bufio.NewScanner(f)
	if !sc.Scan() {
		return 0
	}
	fields := strings.Fields(sc.Text())
	var busy float64
	for i, v := range fields[1:] {
		n, _ := strconv.ParseFloat(v, 64)
		if i != 3 && i != 4 { // idle, iowait
			busy += n
		}
	}
	return busy / 100 // USER_HZ
}

// report logs what happened during one figure: its slow requests (when,
// since the manager started, as GODEBUG=gctrace=1's "@s" in its log) and
// the probe's differences.
func (p *tailProbe) report(name string, before, after tailSample, slow []string) {
	wall := after.at.Sub(before.at).Seconds()
	logf("tail %q: %d over %s%s; kurz: %.0f GCs, %.0f auth reviews, %.0f reconciles; CPU-s kurz %.2f, kube-apiserver %.2f, etcd %.2f, machine %.2f of %.2f s wall (2 cores: %.2f)",
		name, len(slow), slowRequest, bracket(slow), after.gcs-before.gcs, after.reviews-before.reviews, after.reconciles-before.reconciles,
		after.kurzCPU-before.kurzCPU, after.apiServerCPU-before.apiServerCPU, after.etcdCPU-before.etcdCPU, after.machineBusy-before.machineBusy, wall, 2*wall)
}

func bracket(s []string) string {
	if len(s) == 0 {
		return ""
	}
	return " (" + strings.Join(s, ", ") + ")"
}

// slowAt describes a slow request for report.
func (p *tailProbe) slowAt(start time.Time, d time.Duration) string {
	return fmt.Sprintf("%.2f ms at @%.3fs", ms(d), start.Sub(p.started).Seconds())
}
