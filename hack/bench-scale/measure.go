package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/kurz-dev/kurz/internal/devenv"
)

// startFigures are those of one manager start.
type startFigures struct {
	ready, served  time.Duration   // /readyz passes; the last Link redirects
	floor          time.Duration   // every Link's watch-list read and discarded, just before the start (the mean of floorReads)
	floorReads     []time.Duration // each read, -floor-reads of them
	decodeFloor    time.Duration   // the same read through kurz's decoder, each Link dropped (-decode-floor)
	floorCPU       []cpuSpan       // the CPU each floor read took
	began          cpuMark         // the CPU used before the manager started
	cpuUntilServed cpuSpan         // the CPU kube-apiserver, etcd and kurz (the reader) used from the manager's start until served
	peakRSS        int64           // VmHWM up to served
	rss10s         int64           // RSS 10 s after served
	heapTop        string
	loadAtServed   string
	settled        time.Duration // every Link reconciled (first start only)
	settledRSS     int64
	settledAnon    int64 // RssAnon and RssFile when settled
	settledFile    int64
	settlePeakRSS  int64 // VmHWM when settled (or at the timeout): the start and the settle
	settledAt      time.Time
	idle           time.Duration
	idleRSS        int64 // RSS idle after settledAt
	idleAlloc      idleAlloc
	quiet          quietRSS // once quiet after the settle (first start) or serving (restart)
	loadAtSettled  string
	apiServerRSS   int64
	etcdRSS        int64
	settledReadyOK int // Links whose Ready condition is True
	unsettled      int // Links not reconciled when -settle-timeout ran out
}

// measure starts the manager, measures the first start and, with
// c.restart, a restart.
func measure(ctx context.Context, c config, env *devenv.Env, r *results) error {
	kubeconfig, err := filepath.Abs(env.Kubeconfig())
	if err != nil {
		return err
	}
	token, err := os.ReadFile(env.Token())
	if err != nil {
		return err
	}
	w, err := startWatcher(ctx, c, env)
	if err != nil {
		return err
	}
	defer w.stop()
	readFloors(ctx, c, env, &r.first)
	r.loadAtStart = uptime()
	r.first.began = markCPU(env, 0)
	m, err := startManager(c, kubeconfig, filepath.Join(c.outDir, "manager-1.log"))
	if err != nil {
		return err
	}
	w.from(m.started)
	defer func() { m.stop() }()
	logf("manager started (pid %d)", m.cmd.Process.Pid)
	r.settleCost = startSettleCost(ctx, env, m)
	var startTop func() string
	if c.startProfile > 0 {
		startTop = startCPUProfile(ctx, m, c.startProfile, filepath.Join(c.outDir, "cpu-start.pprof"))
	}
	var apiTop, kurzTop func() string
	if c.settleProfile > 0 {
		apiTop = startAPIServerProfile(ctx, env, c.settleProfileAt, c.settleProfile, profilePath(c, "cpu-settle-kube-apiserver.pprof"))
		kurzTop = startCPUProfileAfter(ctx, m, c.settleProfileAt, c.settleProfile, profilePath(c, "cpu-settle-kurz.pprof"))
	}
	if err := waitServing(ctx, c, env, m, &r.first); err != nil {
		return err
	}
	if startTop != nil {
		r.startCPUTop = startTop()
	}
	if err := w.waitSettled(ctx, c, m, r); err != nil {
		return err
	}
	w.release()
	r.settleCost.finish(ctx)
	if apiTop != nil {
		r.settleAPITop, r.settleKurzTop = apiTop(), kurzTop()
	}
	if c.quietWait > 0 && r.first.unsettled == 0 {
		logf("waiting up to %s for the settled replica to be quiet", c.quietWait)
		if r.first.quiet, err = waitQuiet(ctx, "http://"+m.metrics+"/metrics", m.cmd.Process.Pid, r.first.settledAt, c.quietWait, busyGCPercent); err != nil {
			return err
		}
	}
	etcdPID, apiPID := env.PIDs()
	r.first.apiServerRSS, _ = procStatus(apiPID)
	r.first.etcdRSS, _ = procStatus(etcdPID)
	if r.first.heapTop, err = saveHeapProfile(ctx, m, filepath.Join(c.outDir, "heap-settled.pprof")); err != nil {
		logf("heap profile: %v", err)
	}
	r.loadAtAPI = uptime()
	probe := &tailProbe{ctx: ctx, metrics: "http://" + m.metrics + "/metrics", started: m.started, kurz: m.cmd.Process.Pid, apiServer: apiPID, etcd: etcdPID}
	if err := measureAPI(ctx, c, m, probe, strings.TrimSpace(string(token)), filepath.Join(c.outDir, "manager-1.log"), r); err != nil {
		return err
	}
	r.loadAtRedirect = uptime()
	if err := measureRedirects(c, m, r); err != nil {
		return err
	}
	if c.idle > 0 && r.first.unsettled == 0 {
		logf("idle until %s after the settle", c.idle)
		a, err := measureIdle(ctx, "http://"+m.metrics+"/metrics", r.first.settledAt, r.first.settledAt.Add(c.idle))
		if err != nil {
			return err
		}
		r.first.idle, r.first.idleAlloc = c.idle, a
		r.first.idleRSS, _ = procStatus(m.cmd.Process.Pid)
	}
	if !c.restart {
		return nil
	}
	logf("restarting the manager")
	m.stop()
	readFloors(ctx, c, env, &r.restart)
	r.restart.began = markCPU(env, 0)
	if m, err = startManager(c, kubeconfig, filepath.Join(c.outDir, "manager-2.log")); err != nil {
		return err
	}
	r.restarted = true
	var cpuTop func() string
	if c.cpuProfile > 0 {
		cpuTop = startCPUProfile(ctx, m, c.cpuProfile, filepath.Join(c.outDir, "cpu-restart.pprof"))
	}
	if err := waitServing(ctx, c, env, m, &r.restart); err != nil {
		return err
	}
	if cpuTop != nil {
		r.restartCPUTop = cpuTop()
	}
	if c.quietWait > 0 {
		logf("waiting up to %s for the restarted replica to be quiet", c.quietWait)
		if r.restart.quiet, err = waitQuiet(ctx, "http://"+m.metrics+"/metrics", m.cmd.Process.Pid, m.started.Add(r.restart.served), c.quietWait, busyGCPercent); err != nil {
			return err
		}
	}
	if r.restart.heapTop, err = saveHeapProfile(ctx, m, filepath.Join(c.outDir, "heap-restart.pprof")); err != nil {
		logf("heap profile: %v", err)
	}
	return nil
}

// readFloors reads the stream floor and, with -decode-floor, the decode
// floor into f: the decode floor last, unless -decode-floor-first.
func readFloors(ctx context.Context, c config, env *devenv.Env, f *startFigures) {
	if c.decodeFloor && c.decodeFloorFirst {
		f.decodeFloor = decodeFloor(ctx, c, env)
	}
	f.floor, f.floorReads, f.floorCPU = streamFloor(ctx, c, env)
	if c.decodeFloor && !c.decodeFloorFirst {
		f.decodeFloor = decodeFloor(ctx, c, env)
	}
}

// waitServing polls /readyz and the last Link until both answer, then
// samples the RSS 10 s later.
func waitServing(ctx context.Context, c config, env *devenv.Env, m *managerProc, f *startFigures) error {
	noFollow := &http.Client{
		Timeout:       2 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	get := func(url, host string) int {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return 0
		}
		if host != "" {
			req.Host = host
		}
		resp, err := noFollow.Do(req)
		if err != nil {
			return 0
		}
		_ = resp.Body.Close()
		return resp.StatusCode
	}
	last := "http://" + m.redirect + "/" + linkKey(c.n-1)
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for f.ready == 0 || f.served == 0 {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
		}
		if m.exited() {
			return errors.New("kurz manager exited; see its log")
		}
		if f.ready == 0 && get("http://"+m.health+"/readyz", "") == http.StatusOK {
			f.ready = time.Since(m.started)
			logf("ready after %s", f.ready.Round(100*time.Millisecond))
		}
		if f.served == 0 && get(last, host) == http.StatusFound {
			f.served = time.Since(m.started)
			_, f.peakRSS = procStatus(m.cmd.Process.Pid)
			f.cpuUntilServed = f.began.to(markCPU(env, m.cmd.Process.Pid))
			f.loadAtServed = uptime()
			logf("last Link redirects after %s", f.served.Round(100*time.Millisecond))
		}
		if time.Since(m.started) > c.serveTimeout {
			return fmt.Errorf("not serving after %s (-serve-timeout)", c.serveTimeout)
		}
	}
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(10 * time.Second):
	}
	f.rss10s, _ = procStatus(m.cmd.Process.Pid)
	_, f.peakRSS = procStatus(m.cmd.Process.Pid)
	return nil
}

// results are every figure of a run.
type results struct {
	n                         int
	emptyRSS                  int64 // the manager's RSS with no Link (0: not measured)
	emptyAnon, emptyFile      int64 // its RssAnon and RssFile
	emptyHeapTop              string
	analytics                 string
	restartCPUTop             string
	startCPUTop               string
	settleAPITop              string // kube-apiserver's CPU profile while settling
	settleKurzTop             string // kurz's
	settleCost                *settleCost
	loadAtStart               string
	loadRate                  float64 // creates/s; -1: Links were there
	first, restart            startFigures
	restarted                 bool
	api                       []apiFigure
	loadAtAPI, loadAtRedirect string
	redirectRPS               float64
	redirectP99               time.Duration
	redirectErrors            int
}

func mib(b int64) string { return fmt.Sprintf("%d MiB", b>>20) }

func secs(d time.Duration) string { return fmt.Sprintf("%.1f s", d.Seconds()) }

func (r *results) print(w *os.File) {
	perLink := func(b int64) string {
		if r.n == 0 {
			return ""
		}
		if r.emptyRSS == 0 {
			return fmt.Sprintf(" (%.1f KB per link)", float64(b)/float64(r.n)/1000)
		}
		// Both: the total over N is the headline (issue 31's target), the
		// marginal one what each Link adds above an empty replica.
		return fmt.Sprintf(" (%.1f KB per link; %.1f KB per link above the empty replica)",
			float64(b)/float64(r.n)/1000, float64(b-r.emptyRSS)/float64(r.n)/1000)
	}
	p := func(k, v string) { fmt.Fprintf(w, "| %s | %s |\n", k, v) }
	fmt.Fprintf(w, "\n| %d Links | measured |\n|---|---|\n", r.n)
	if r.loadRate > 0 {
		p("load (creates, client-go)", fmt.Sprintf("%.0f/s", r.loadRate))
	}
	f := r.first
	if r.emptyRSS > 0 {
		p(fmt.Sprintf("kurz RSS, empty replica (no Link, %s after /readyz)", secs(emptyWait)),
			fmt.Sprintf("%s (anonymous %s, the binary's and other files' pages %s)", mib(r.emptyRSS), mib(r.emptyAnon), mib(r.emptyFile)))
	} else {
		p("kurz RSS, empty replica", "not measured (Links there already, or -empty-replica=false)")
	}
	if r.analytics != "" {
		p("click analytics", r.analytics)
	}
	p("load average when the manager started", r.loadAtStart)
	p("first start: /readyz passes", secs(f.ready))
	p("first start: last link redirects", fmt.Sprintf("%s (load %s), %.1f CPU-s", secs(f.served), f.loadAtServed, f.cpuUntilServed.reader)+f.ofFloor())
	if b := f.cpuBound(); b != "" {
		p("first start: CPU until the last link redirects", b)
	}
	if f.unsettled > 0 {
		p("controllers settled (every Link reconciled)", fmt.Sprintf("not within %s: %d of %d reconciled (load %s)", secs(f.settled), r.n-f.unsettled, r.n, f.loadAtSettled))
		p("kurz RSS, at the timeout", mib(f.settledRSS)+perLink(f.settledRSS))
	} else {
		p("controllers settled (every Link reconciled)", fmt.Sprintf("%s (load %s; %d Ready)", secs(f.settled), f.loadAtSettled, f.settledReadyOK))
		p("kurz RSS, settled", mib(f.settledRSS)+perLink(f.settledRSS))
		if f.settledAnon > 0 {
			p("kurz RSS settled: anonymous / files (the binary's pages)", mib(f.settledAnon)+" / "+mib(f.settledFile))
		}
		if f.quiet.measured {
			p("kurz RSS once quiet after the settle", f.quiet.describe(perLink))
		}
		if f.idleRSS > 0 {
			p(fmt.Sprintf("kurz RSS, idle %s after the settle", secs(f.idle)), mib(f.idleRSS)+perLink(f.idleRSS))
			p(f.idleAlloc.row())
		}
	}
	r.settleCost.print(p, r.n-f.unsettled)
	p("kurz peak RSS, first start", mib(f.peakRSS)+perLink(f.peakRSS))
	p("kurz peak RSS, first start and settle", mib(f.settlePeakRSS)+perLink(f.settlePeakRSS))
	p("kube-apiserver RSS", mib(f.apiServerRSS))
	p("etcd RSS", mib(f.etcdRSS))
	for _, a := range r.api {
		p("API "+a.name+" p50 / p99 / max", fmt.Sprintf("%.2f / %.2f / %.2f ms (load %s)", ms(a.p50), ms(a.p99), ms(a.max), r.loadAtAPI))
	}
	p("redirects, keep-alive", fmt.Sprintf("%.0f/s, p99 %.2f ms, %d errors (load %s)", r.redirectRPS, ms(r.redirectP99), r.redirectErrors, r.loadAtRedirect))
	if r.restarted {
		s := r.restart
		p("restart: /readyz passes", secs(s.ready))
		p("restart: last link redirects", fmt.Sprintf("%s (load %s), %.1f CPU-s", secs(s.served), s.loadAtServed, s.cpuUntilServed.reader)+s.ofFloor())
		if b := s.cpuBound(); b != "" {
			p("restart: CPU until the last link redirects", b)
		}
		p("kurz RSS 10 s after serving, restart", mib(s.rss10s)+perLink(s.rss10s))
		if s.quiet.measured {
			p("kurz RSS once quiet after the restart", s.quiet.describe(perLink)+s.quiet.ofSettled(f.quiet))
		}
		p("kurz peak RSS, restart", mib(s.peakRSS))
	}
	for _, t := range []struct{ name, top string }{
		{"heap profile, empty replica", r.emptyHeapTop}, {"heap profile, settled", f.heapTop}, {"heap profile, restart", r.restart.heapTop}, {"CPU profile of the first start", r.startCPUTop}, {"CPU profile of the restart", r.restartCPUTop},
		{"CPU profile of kube-apiserver while settling", r.settleAPITop}, {"CPU profile of kurz while settling", r.settleKurzTop},
	} {
		top := t.top
		if top == "" {
			continue
		}
		fmt.Fprintf(w, "\n%s (top 15):\n", t.name)
		lines := strings.Split(top, "\n")
		fmt.Fprintln(w, strings.Join(lines[:min(len(lines), 21)], "\n"))
	}
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
