package webhooks_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime/pprof"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kurzv1alpha1 "github.com/kurz-dev/kurz/api/v1alpha1"
	"github.com/kurz-dev/kurz/internal/dns/dnstest"
	"github.com/kurz-dev/kurz/internal/parallel"
	"github.com/kurz-dev/kurz/internal/scheme"
	"github.com/kurz-dev/kurz/internal/testenv"
	"github.com/kurz-dev/kurz/internal/webhooks"
)

// BenchmarkRedirectWebhooksOnOff is make bench-webhooks' redirect figure:
// redirect throughput of one replica wired as `kurz manager` by default
// (webhooks on, analytics off) with no Webhook, and with a Webhook that
// subscribes to link.clicked of every Link, delivering to an HTTPS
// receiver on loopback. The receiver is this test binary again in a
// process of its own (webhooks.ReceiverEnv), so that "on" pays for sending the
// clicks, not for receiving them; with two or more CPUs the replica (this
// process) is pinned to CPU 0 and wrk, the receiver and the control plane
// to the last, as make bench-redirect pins kurz and nginx. The same wrk
// load (random keys of LINKS Links, CONNECTIONS connections, DURATION a
// round; the Webhook's maxClicksPerRequest CLICKS_PER_REQUEST, 100 by
// default) runs ROUNDS times each, alternating off and on; it prints each
// round (requests/s, this process's CPU per request, and the clicks the
// receiver got: none off, about every request on), the means, on/off as
// "ratio" and the CPU per click spent on webhooks (on minus off). Run it
// alone (-benchtime 1x): b.N is ignored. With CPUPROFILE set to a
// directory it writes this process's CPU profile of each round there
// (off-1.pprof, on-1.pprof, ...), for `go tool pprof -diff_base`.
func BenchmarkRedirectWebhooksOnOff(b *testing.B) {
	env := testenv.Need(b)
	if _, err := exec.LookPath("wrk"); err != nil {
		b.Skip("needs wrk (apt-get install wrk)")
	}
	links := envInt(b, "LINKS", 1000)
	rounds := envInt(b, "ROUNDS", 3)
	conns := envInt(b, "CONNECTIONS", 64)
	perRequest := envInt(b, "CLICKS_PER_REQUEST", 100)
	duration := os.Getenv("DURATION")
	if duration == "" {
		duration = "10s"
	}
	g := NewWithT(b)
	ctx := context.Background()

	cpu := lastCPU()
	rcv := webhooks.StartReceiverProcess(b, cpu, false)
	ca := rcv.CAFile
	received := func(g Gomega) int64 {
		n, err := rcv.Clicks()
		g.Expect(err).NotTo(HaveOccurred())
		return n
	}

	dns := dnstest.Start(b)
	o := replicaOptions(b, dns, ca)
	o.EnableRedirect = true
	o.Redirect.BindAddress = testenv.FreeAddr(b)
	o.Redirect.ShutdownTimeout = 2 * time.Second
	startReplica(b, o)
	ns := newNamespace(b)
	host := verifiedDomain(b, dns, ns)

	cfg := rest.CopyConfig(env.Config)
	cfg.QPS, cfg.Burst = 500, 1000
	c, err := client.New(cfg, client.Options{Scheme: scheme.Scheme})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(parallel.Each(ctx, 0, links, 8, func(i int) error {
		return c.Create(ctx, newLink(ns, fmt.Sprintf("l%d", i), host, fmt.Sprintf("k%d", i)))
	})).To(Succeed())
	last := fmt.Sprintf("/k%d", links-1)
	g.Eventually(func() int { return status(o.Redirect.BindAddress, host, last) }, timeout, poll).Should(Equal(http.StatusFound))
	newSecret(b, ns, "signing", true)
	if cpu >= 0 {
		// The replica (this process) on core 0; wrk, the receiver and the
		// control plane on the other.
		pinProcess(b, os.Getpid(), 0)
		for _, pid := range childPIDs(os.Getpid()) {
			pinProcess(b, pid, cpu)
		}
	}

	script := filepath.Join(b.TempDir(), "keys.lua")
	g.Expect(os.WriteFile(script, []byte(fmt.Sprintf(`math.randomseed(os.time())
wrk.headers["Host"] = %q
wrk.headers["User-Agent"] = "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36"
wrk.headers["Referer"] = "https://news.example.com/today"
request = function() return wrk.format("GET", "/k" .. math.random(0, %d)) end
`, host, links-1)), 0o600)).To(Succeed())
	// wrk returns requests/s and this process's CPU time per request,
	// and says what else the round cost: this process's minor page
	// faults a request, and the CPU time of wrk and of the receiver (on
	// the other core, where they compete).
	wrk := func(d string) (float64, time.Duration, string) {
		args := []string{"-t1", "-c" + strconv.Itoa(conns), "-d" + d, "-s", script, "http://" + o.Redirect.BindAddress + "/"}
		cmd := exec.Command("wrk", args...)
		if cpu >= 0 {
			cmd = exec.Command("taskset", append([]string{"-c", strconv.Itoa(cpu), "wrk"}, args...)...)
		}
		load := loadAverage()
		before, faults, rcvBefore := processCPU(b), minorFaults(b), rcv.CPU()
		out, err := cmd.CombinedOutput()
		used, faults, rcvUsed := processCPU(b)-before, minorFaults(b)-faults, rcv.CPU()-rcvBefore
		g.Expect(err).NotTo(HaveOccurred(), "%s", out)
		m := regexp.MustCompile(`Requests/sec:\s+([0-9.]+)`).FindSubmatch(out)
		g.Expect(m).NotTo(BeNil(), "%s", out)
		rps, _ := strconv.ParseFloat(string(m[1]), 64)
		n := regexp.MustCompile(`([0-9]+) requests in`).FindSubmatch(out)
		g.Expect(n).NotTo(BeNil(), "%s", out)
		requests, _ := strconv.ParseInt(string(n[1]), 10, 64)
		requests = max(requests, 1)
		var wrkUsed time.Duration
		if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
			wrkUsed = time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
		}
		return rps, used / time.Duration(requests), fmt.Sprintf("%.2f minor faults/request, wrk %.1fs CPU, receiver %.1fs CPU, load %s",
			float64(faults)/float64(requests), wrkUsed.Seconds(), rcvUsed.Seconds(), load)
	}

	var wh *kurzv1alpha1.Webhook
	set := func(on bool) {
		if !on {
			if wh != nil {
				g.Expect(c.Delete(ctx, wh)).To(Succeed())
				g.Eventually(func() bool { return apiGone(wh) }, timeout, poll).Should(BeTrue())
				wh = nil
				// Deliveries of the last batches land before the round.
				before := int64(-1)
				g.Eventually(func() bool { n := received(g); settled := n == before; before = n; return settled }, timeout, 2*time.Second).Should(BeTrue())
			}
			return
		}
		if wh != nil {
			return // on already
		}
		wh = &kurzv1alpha1.Webhook{}
		wh.Namespace, wh.Name = ns, "clicks"
		wh.Spec = kurzv1alpha1.WebhookSpec{URL: rcv.URL + "/hook", Events: []kurzv1alpha1.WebhookEvent{kurzv1alpha1.EventLinkClicked},
			SecretRef: kurzv1alpha1.WebhookSecretRef{Name: "signing"}, MaxClicksPerRequest: int32(perRequest)}
		g.Expect(c.Create(ctx, wh)).To(Succeed())
		// On once a click gets through.
		before := received(g)
		g.Eventually(func() int64 {
			status(o.Redirect.BindAddress, host, "/k0")
			return received(g) - before
		}, timeout, 200*time.Millisecond).Should(BeNumerically(">", 0))
	}

	fmt.Printf("redirects with webhooks off (no Webhook) and on (a Webhook for link.clicked of every Link, at most %d clicks a request, receiver in a process of its own): %d links, %d connections, %d rounds of %s each; replica pinned to CPU 0, wrk, receiver and control plane to CPU %d\n",
		perRequest, links, conns, rounds, duration, cpu)
	_, _, _ = wrk("2s") // warm up
	var sum [2]float64
	var cpuSum [2]time.Duration
	for r := range rounds {
		order := []bool{false, true}
		if r%2 == 1 {
			order = []bool{true, false}
		}
		for _, on := range order {
			set(on)
			i, name := 0, "off"
			if on {
				i, name = 1, "on"
			}
			stopProfile := startProfile(b, fmt.Sprintf("%s-%d.pprof", name, r+1))
			before := received(g)
			rps, perReq, also := wrk(duration)
			stopProfile()
			sum[i] += rps
			cpuSum[i] += perReq
			fmt.Printf("  round %d %-3s %9.0f req/s  %6.2f us CPU/request  (clicks received in the round: %d; %s)\n",
				r+1, name, rps, float64(perReq.Nanoseconds())/1e3, received(g)-before, also)
		}
	}
	set(false)
	off, on := sum[0]/float64(rounds), sum[1]/float64(rounds)
	cpuOff, cpuOn := cpuSum[0]/time.Duration(rounds), cpuSum[1]/time.Duration(rounds)
	fmt.Printf("webhooks off: %.0f req/s, %.2f us CPU/request\nwebhooks on:  %.0f req/s, %.2f us CPU/request\nratio on/off: %.3f (target >= 0.95); CPU per click spent on webhooks: %.2f us\n",
		off, float64(cpuOff.Nanoseconds())/1e3, on, float64(cpuOn.Nanoseconds())/1e3, on/off, float64((cpuOn-cpuOff).Nanoseconds())/1e3)
	b.ReportMetric(off, "off-req/s")
	b.ReportMetric(on, "on-req/s")
	b.ReportMetric(on/off, "ratio")
}

// startProfile starts this process's CPU profile into name in the
// directory CPUPROFILE names, and returns what stops it; without
// CPUPROFILE it does nothing.
func startProfile(b *testing.B, name string) (stop func()) {
	dir := os.Getenv("CPUPROFILE")
	if dir == "" {
		return func() {}
	}
	f, err := os.Create(filepath.Join(dir, name))
	if err != nil {
		b.Fatal(err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		b.Fatal(err)
	}
	return func() {
		pprof.StopCPUProfile()
		if err := f.Close(); err != nil {
			b.Fatal(err)
		}
	}
}

// minorFaults is how many minor page faults this process has taken.
func minorFaults(b *testing.B) int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return ru.Minflt
}

// loadAverage is the machine's one-minute load average ("?" unknown):
// the benchmark shares the machine.
func loadAverage() string {
	data, err := os.ReadFile("/proc/loadavg")
	if f := strings.Fields(string(data)); err == nil && len(f) > 0 {
		return f[0]
	}
	return "?"
}

// processCPU is the user and system CPU time this process has used.
func processCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func envInt(b *testing.B, name string, def int) int {
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		b.Fatalf("%s=%q: want a positive integer", name, v)
	}
	return n
}

// status GETs path on host from the redirect server at addr; 0 on error.
func status(addr, host, path string) int {
	req, err := http.NewRequest(http.MethodGet, "http://"+addr+path, nil)
	if err != nil {
		return 0
	}
	req.Host = host
	res, err := noRedirects.Do(req)
	if err != nil {
		return 0
	}
	_, _ = io.Copy(io.Discard, res.Body)
	_ = res.Body.Close()
	return res.StatusCode
}
