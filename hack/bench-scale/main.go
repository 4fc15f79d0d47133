// Command bench-scale measures kurz at scale as an operator would (make
// bench-scale N=...): it starts the control plane of `kurz dev` (etcd and
// kube-apiserver, internal/devenv) in a data directory, loads N Links into
// namespace default (as `kubectl apply` would write them, with the
// last-applied-configuration annotation), then starts `kurz manager` (every
// role) as a separate process on free ports and measures:
//
//   - time until /readyz passes and until the last Link redirects;
//   - time until every Link is reconciled (status.observedGeneration
//     caught up and a Ready condition written);
//   - the RSS of kurz (peak while starting, settled, and once quiet after
//     the settle: quiet.go), kube-apiserver and etcd, and a heap profile of
//     kurz (go tool pprof -top);
//   - API latency p50/p99 for the first, middle and last page and a show;
//   - redirect throughput over keep-alive connections;
//   - with -idle, the idle replica's RSS and what it allocates per second
//     once the redirect run's clicks are written (idle.go);
//   - then it restarts the manager and measures serving and RSS again
//     (10 s after serving, and once quiet).
//
// Before loading into an empty control plane it also starts the manager
// with no Link and reads its RSS (empty.go): each RSS per link is given as
// the total over N and as the marginal cost above that empty replica.
//
// With -data-dir the directory is kept, and a later run that finds the
// Links there already skips the load (and measures a start with status
// settled). Figures go to stdout as a Markdown table.
//
// Loading: up to 100 000 Links (-loader=auto) are created through
// kube-apiserver, about 600-1 000 a second on two cores. Above that they are
// written straight into etcd as kube-apiserver would store them (etcdload.go:
// the stored JSON of a Link created through the API is the template, checked
// byte for byte against a second one), which loads a million in minutes
// instead of half an hour; kube-apiserver must then count, get and
// field-select them before anything is measured.
//
// The control plane runs as `kurz dev` runs it: no watch cache for Links
// unless -links-watch-cache, kube-apiserver's GOGC from
// -kube-apiserver-gogc, etcd's quota from -etcd-quota-backend-bytes.
// -control-plane-only measures kube-apiserver and etcd alone (RSS, etcd's
// database size, latency of an informer sync, counts, pages, gets and
// field-selected lists) and starts no manager. Run with the watch cache on
// at a million Links inside a memory cgroup: it may outgrow the machine.
// -status-floor starts no manager either: bench-scale writes every Link's
// status once itself, as the Link controller's first pass does, with two
// informers watching (floor.go), and reports the time and the CPU per Link:
// the control plane's floor under any settle on the machine.
//
// Timeouts scale with N: -serve-timeout 10 and -settle-timeout 20 minutes
// per 100 000 Links unless given.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/go-logr/logr"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/kurz-dev/kurz/internal/devenv"
)

type config struct {
	n                int
	kurz             string
	dataDir          string
	outDir           string
	workers          int
	lastApplied      bool
	settle           time.Duration
	serveTimeout     time.Duration
	apiSamples       int
	apiDuration      time.Duration
	apiTrace         time.Duration
	loadTime         time.Duration
	conns            int
	restart          bool
	idle             time.Duration
	quietWait        time.Duration
	emptyReplica     bool
	loadOnly         bool
	cpuProfile       time.Duration
	startProfile     time.Duration
	extraArgs        stringList
	extraEnv         stringList
	loader           string
	watchCache       bool
	apiServerGOGC    int
	etcdQuota        int64
	controlPlaneOnly bool
	statusFloor      bool
	floorWorkers     int
	floorReads       int
	floorProtocol    string
	decodeFloor      bool
	decodeFloorFirst bool
	// settleProfile profiles kube-apiserver and kurz for this long,
	// settleProfileAt after the manager's start (0: no profile).
	settleProfile, settleProfileAt time.Duration
}

// bulk tells whether Links are written into etcd directly (etcdload.go)
// rather than created through kube-apiserver.
func (c config) bulk() bool {
	return c.loader == "etcd" || (c.loader == "auto" && c.n > bulkAbove)
}

// bulkAbove is the largest N -loader=auto creates through kube-apiserver.
const bulkAbove = 100000

type stringList []string

func (s *stringList) String() string     { return fmt.Sprint(*s) }
func (s *stringList) Set(v string) error { *s = append(*s, v); return nil }

func main() {
	var c config
	flag.IntVar(&c.n, "n", 100000, "Links to load.")
	flag.StringVar(&c.kurz, "kurz", "bin/kurz", "The kurz binary to start as the manager.")
	flag.StringVar(&c.dataDir, "data-dir", "", "Control-plane data directory, kept after the run; one that holds the Links already skips the load (default: a temporary directory, removed).")
	flag.StringVar(&c.outDir, "out", "", "Directory for heap profiles and the manager's logs (default: a temporary directory, kept).")
	flag.IntVar(&c.workers, "workers", 32, "Concurrent creates while loading.")
	flag.BoolVar(&c.lastApplied, "last-applied", true, "Give each Link the last-applied-configuration annotation client-side kubectl apply writes.")
	flag.DurationVar(&c.settle, "settle-timeout", 0, "How long to wait for every Link to be reconciled (default: 20 minutes per 100 000 Links, at least 20 minutes).")
	flag.DurationVar(&c.serveTimeout, "serve-timeout", 0, "How long a start may take until the last Link redirects (default: 10 minutes per 100 000 Links, at least 10 minutes).")
	flag.StringVar(&c.loader, "loader", "auto", "How to load Links: api (creates through kube-apiserver), etcd (written into etcd as kube-apiserver stores them; see etcdload.go), auto (api up to 100 000 Links, etcd above).")
	flag.BoolVar(&c.watchCache, "links-watch-cache", false, "Run kube-apiserver with its watch cache for Links (kurz dev's --links-watch-cache).")
	flag.Int64Var(&c.etcdQuota, "etcd-quota-backend-bytes", 0, "etcd's quota (default: kurz dev's).")
	flag.IntVar(&c.apiServerGOGC, "kube-apiserver-gogc", 0, "kube-apiserver's GOGC (default: kurz dev's).")
	flag.BoolVar(&c.controlPlaneOnly, "control-plane-only", false, "After loading, measure kube-apiserver and etcd alone (RSS, Link list latency) and start no manager.")
	flag.BoolVar(&c.statusFloor, "status-floor", false, "After loading, start no manager: write every Link's status once from bench-scale itself (the Link controller's first patch, no client rate limit) with two informers watching, and report the time and CPU per Link, the control plane's floor under any settle. Needs unreconciled Links (a copy of a -load-only directory).")
	flag.IntVar(&c.floorReads, "floor-reads", 2, "Times the stream floor is read, one after the other, just before each start; a start is given against their mean.")
	flag.StringVar(&c.floorProtocol, "floor-protocol", "h2", "The stream floor's protocol: h2 (kurz's informer's), http/1.1, or both (the reads alternate, h2 first, and the start is given against the mean of all).")
	flag.BoolVar(&c.decodeFloor, "decode-floor", true, "After the stream floor, read the same watch-list once more through kurz's own client and decoder, dropping each Link: the start's cost of decoding alone, given beside the start.")
	flag.BoolVar(&c.decodeFloorFirst, "decode-floor-first", false, "Read the decode floor before the stream floor, not after (stop 52 read it first to show that a stream read right after it costs kube-apiserver no more; docs/scaling.md).")
	flag.IntVar(&c.floorWorkers, "floor-workers", 16, "Concurrent status writes of -status-floor (kurz manager's --link-workers is 16).")
	flag.IntVar(&c.apiSamples, "api-samples", 200, "Requests per API read figure at least (the reads take turns until -api-duration has passed and each has this many).")
	flag.DurationVar(&c.apiDuration, "api-duration", time.Minute, "How long the API's read figures take turns, one request of each after the other, one at a time: long enough for several of the manager's collections.")
	flag.DurationVar(&c.apiTrace, "api-trace", 0, "Record a runtime execution trace of the manager for this long from the start of the API's read figures, into api-trace.out in -out (0: none).")
	flag.DurationVar(&c.loadTime, "redirect-duration", 5*time.Second, "Duration of the redirect throughput run.")
	flag.IntVar(&c.conns, "redirect-conns", 32, "Keep-alive connections of the redirect throughput run.")
	flag.BoolVar(&c.restart, "restart", true, "Restart the manager once settled and measure the start again.")
	flag.DurationVar(&c.quietWait, "quiet-wait", 3*time.Minute, "After the settle, and after the restart serves, wait up to this long for kurz to lower its GC percent and its RSS to stop falling, and report that RSS, the one a settled replica keeps (quiet.go); 0: skip.")
	flag.DurationVar(&c.idle, "idle", 2*time.Minute, "After the API and redirect figures, wait until this long after the settle and measure the idle replica's RSS (its steady state: Go collects at least every 2 minutes and returns freed memory meanwhile) and what it allocates from when the redirect run's clicks are written (kurz_clicks_pending 0) to then; 0: skip.")
	flag.BoolVar(&c.emptyReplica, "empty-replica", true, "Before loading into an empty control plane, start the manager with no Link (the Domain only) and read its RSS 30 s after /readyz: the per-link figures are then also given above that floor, (RSS - empty RSS) / N.")
	flag.BoolVar(&c.loadOnly, "load-only", false, "Stop after loading (with -data-dir: a copy of the directory then starts every later run from unreconciled Links).")
	flag.DurationVar(&c.startProfile, "start-cpu-profile", 0, "Profile the CPU of the first manager for this long from its start, into cpu-start.pprof (0: no profile).")
	flag.DurationVar(&c.cpuProfile, "restart-cpu-profile", 20*time.Second, "Profile the CPU of the restarted manager for this long from its start (0: no profile).")
	flag.DurationVar(&c.settleProfile, "settle-cpu-profile", 0, "Profile the CPU of kube-apiserver and kurz for this long while the controllers settle (0: no profile).")
	flag.DurationVar(&c.settleProfileAt, "settle-cpu-profile-at", time.Minute, "When, after the manager's start, -settle-cpu-profile begins.")
	flag.Var(&c.extraArgs, "manager-arg", "Extra flag for kurz manager (repeatable).")
	flag.Var(&c.extraEnv, "manager-env", "Extra NAME=VALUE in kurz manager's environment (repeatable): GODEBUG=gctrace=1 writes each GC, with its time since the start, into the manager's log, beside which the API figures' slow requests are logged.")
	flag.Parse()
	if c.floorProtocol != "h2" && c.floorProtocol != "http/1.1" && c.floorProtocol != "both" {
		fmt.Fprintf(os.Stderr, "bench-scale: -floor-protocol must be h2, http/1.1 or both, not %q\n", c.floorProtocol)
		os.Exit(2)
	}
	if c.loader != "api" && c.loader != "etcd" && c.loader != "auto" {
		fmt.Fprintf(os.Stderr, "bench-scale: -loader must be api, etcd or auto, not %q\n", c.loader)
		os.Exit(2)
	}
	per100k := func(d time.Duration) time.Duration { return max(d, d*time.Duration(c.n)/100000) }
	if c.settle == 0 {
		c.settle = per100k(20 * time.Minute)
	}
	if c.serveTimeout == 0 {
		c.serveTimeout = per100k(10 * time.Minute)
	}
	ctrllog.SetLogger(logr.Discard()) // the tool's own informer; its progress is logf
	if err := run(c); err != nil {
		fmt.Fprintln(os.Stderr, "bench-scale:", err)
		os.Exit(1)
	}
}

func run(c config) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	var err error
	if c.kurz, err = filepath.Abs(c.kurz); err != nil {
		return err
	}
	if c.dataDir == "" {
		dir, err := os.MkdirTemp("", "bench-scale-data-")
		if err != nil {
			return err
		}
		defer func() { _ = os.RemoveAll(dir) }()
		c.dataDir = dir
	}
	if c.outDir == "" {
		if c.outDir, err = os.MkdirTemp("", "bench-scale-out-"); err != nil {
			return err
		}
	}
	if err := os.MkdirAll(c.outDir, 0o755); err != nil {
		return err
	}
	logf("control plane in %s, profiles and logs in %s", c.dataDir, c.outDir)
	eo := devenv.DefaultOptions()
	eo.DataDir, eo.LinksWatchCache = c.dataDir, c.watchCache
	if c.etcdQuota != 0 { // 0: kurz dev's
		eo.EtcdQuotaBytes = c.etcdQuota
	}
	if c.apiServerGOGC != 0 { // 0: kurz dev's
		eo.KubeAPIServerGOGC = c.apiServerGOGC
	}
	env, err := devenv.Start(ctx, eo)
	if err != nil {
		return err
	}
	defer func() {
		if err := env.Stop(); err != nil {
			logf("stop control plane: %v", err)
		}
	}()
	r := &results{n: c.n, analytics: analyticsNote(c)}
	if err := load(ctx, c, env, r); err != nil {
		return err
	}
	if c.loadOnly {
		return nil
	}
	if c.controlPlaneOnly {
		return measureControlPlane(ctx, c, env, os.Stdout)
	}
	if c.statusFloor {
		return statusFloor(ctx, c, env, os.Stdout)
	}
	if err := measure(ctx, c, env, r); err != nil {
		r.print(os.Stdout)
		return err
	}
	r.print(os.Stdout)
	return nil
}

func logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "%s bench-scale: "+format+"\n", append([]any{time.Now().Format("15:04:05")}, args...)...)
}
