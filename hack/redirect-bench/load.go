package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/kurz-dev/kurz/internal/parallel"
)

type loadConfig struct {
	addr, host string
	links      int
	conns      int
	attackers  int
	duration   time.Duration
	// clients fetch redirects in the password scenario; rate paces them
	// (redirects per second over all of them), 0: each as fast as it can.
	clients, rate int
	// passwordConcurrency is the child server's, 0 for its default.
	passwordConcurrency int
	// serverSession starts the server in a session of its own: with the
	// kernel's autogroups, its threads then share the CPUs with the load
	// generator's as two groups, as a pod's cgroup does with its clients,
	// rather than thread by thread.
	serverSession bool
	// serverCPUs pins the server (taskset -c), "" leaves it free.
	serverCPUs string
	// serverBin is the server's binary, a redirect-bench built from another
	// tree (as bench-redirect.sh's BEFORE); "" for this one. Only this one
	// reports its runtime's figures.
	serverBin string
}

// copyAutogroupNice gives the server's autogroup the load generator's nice
// value: a benchmark run at a raised autogroup priority (to shield it from
// other work on a shared machine) raises both.
func copyAutogroupNice(pid int) {
	b, err := os.ReadFile("/proc/self/autogroup")
	if err != nil {
		return
	}
	f := strings.Fields(string(b)) // "/autogroup-N nice V"
	if len(f) == 3 && f[2] != "0" {
		_ = os.WriteFile(fmt.Sprintf("/proc/%d/autogroup", pid), []byte(f[2]), 0)
	}
}

// raiseFileLimit lifts the open-file limit to what 20 000 connections need
// (the process is root in the benchmark environment; otherwise the hard
// limit stays and only the soft one rises).
func raiseFileLimit() {
	want := uint64(200_000)
	var l syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &l); err != nil {
		return
	}
	if syscall.Setrlimit(syscall.RLIMIT_NOFILE, &syscall.Rlimit{Cur: want, Max: max(want, l.Max)}) != nil {
		_ = syscall.Setrlimit(syscall.RLIMIT_NOFILE, &syscall.Rlimit{Cur: l.Max, Max: l.Max})
	}
}

func runLoad(scenario string, c loadConfig) error {
	raiseFileLimit()
	args := []string{"-addr", c.addr, "-host", c.host, "-links", strconv.Itoa(c.links)}
	switch scenario {
	case "idle-conns":
	case "password":
		args = append(args, "-password-links", "1000")
		if c.passwordConcurrency > 0 {
			args = append(args, "-password-concurrency", strconv.Itoa(c.passwordConcurrency))
		}
	default:
		return fmt.Errorf("-load: unknown scenario %q", scenario)
	}
	self, err := os.Executable()
	if err != nil {
		return err
	}
	if c.serverBin != "" {
		self = c.serverBin
	}
	cmd := exec.Command(self, args...)
	if c.serverCPUs != "" {
		// Before exec: the runtime sizes GOMAXPROCS by the affinity it
		// starts with.
		cmd = exec.Command("taskset", append([]string{"-c", c.serverCPUs, self}, args...)...)
	}
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if c.serverSession {
		cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	if c.serverSession {
		copyAutogroupNice(cmd.Process.Pid)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	if err := waitUp(c); err != nil {
		return err
	}
	if scenario == "idle-conns" {
		return idleConns(c, cmd.Process.Pid)
	}
	pid := cmd.Process.Pid
	if c.serverBin != "" {
		pid = 0 // it may not handle SIGUSR2, whose default action kills
	}
	return passwordLoad(c, pid)
}

func waitUp(c loadConfig) error {
	for range 600 {
		if s, err := getStatus(http.DefaultClient, c, "/k0"); err == nil && s == http.StatusFound {
			return nil
		}
		time.Sleep(100 * time.Millisecond)
	}
	return errors.New("the server did not answer 302 for /k0")
}

func getStatus(cl *http.Client, c loadConfig, path string) (int, error) {
	req, _ := http.NewRequest("GET", "http://"+c.addr+path, nil)
	req.Host = c.host
	tr := cl.Transport
	if tr == nil {
		tr = http.DefaultTransport
	}
	resp, err := tr.RoundTrip(req)
	if err != nil {
		return 0, err
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode, nil
}

// rssKiB reads VmRSS of pid from /proc.
func rssKiB(pid int) (int, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	for line := range strings.Lines(string(b)) {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			return strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(v), " kB"))
		}
	}
	return 0, errors.New("no VmRSS")
}

// idleConns opens c.conns keep-alive connections, sends one redirect
// request on each and leaves them idle, then reports the server's RSS
// growth per connection.
func idleConns(c loadConfig, pid int) error {
	// Warm the pools and the runtime first so the baseline is a server that
	// has served.
	for i := range 2000 {
		if _, err := getStatus(http.DefaultClient, c, "/k"+strconv.Itoa(i%c.links)); err != nil {
			return err
		}
	}
	time.Sleep(time.Second)
	before, err := rssKiB(pid)
	if err != nil {
		return err
	}
	conns := make([]net.Conn, c.conns)
	defer func() {
		for _, conn := range conns {
			if conn != nil {
				conn.Close()
			}
		}
	}()
	err = parallel.Each(context.Background(), 0, c.conns, 64, func(i int) error {
		// Spread over loopback addresses: one source address has
		// only ~28 000 ephemeral ports.
		d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.IPv4(127, 0, 2, byte(1+i%200))}}
		conn, err := d.DialContext(context.Background(), "tcp", c.addr)
		if err == nil {
			conns[i] = conn
			err = oneRequest(conn, c.host, "/k"+strconv.Itoa(i%c.links))
		}
		if err != nil {
			return fmt.Errorf("connection %d: %w", i, err)
		}
		return nil
	})
	if err != nil {
		return err
	}
	time.Sleep(3 * time.Second) // let the server's goroutines park
	after, err := rssKiB(pid)
	if err != nil {
		return err
	}
	fmt.Printf("idle keep-alive connections: %d\n", c.conns)
	fmt.Printf("server RSS before: %d KiB, after: %d KiB\n", before, after)
	fmt.Printf("RSS per idle connection: %.2f KiB\n", float64(after-before)/float64(c.conns))
	// At rest: after a GC (the runtime forces one every two minutes) and
	// the scavenger's return of free pages.
	if err := syscall.Kill(pid, syscall.SIGUSR1); err != nil {
		return err
	}
	time.Sleep(3 * time.Second)
	rest, err := rssKiB(pid)
	if err != nil {
		return err
	}
	fmt.Printf("server RSS at rest (after GC): %d KiB, per idle connection: %.2f KiB\n", rest, float64(rest-before)/float64(c.conns))
	return nil
}

// oneRequest sends a GET on conn and reads the whole answer, leaving the
// connection open.
func oneRequest(conn net.Conn, host, path string) error {
	if _, err := fmt.Fprintf(conn, "GET %s HTTP/1.1\r\nHost: %s\r\n\r\n", path, host); err != nil {
		return err
	}
	resp, err := http.ReadResponse(bufio.NewReaderSize(conn, 4096), nil)
	if err != nil {
		return err
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusFound {
		return fmt.Errorf("status %d", resp.StatusCode)
	}
	return nil
}

// redirectLatency runs c.clients keep-alive clients fetching random links
// for d and returns the latencies. With c.rate each client sends on a fixed
// schedule, and a latency counts from the time the request was due, not
// from when a late client got to send it (a stall delays every request due
// during it, not just one).
func redirectLatency(c loadConfig, d time.Duration) ([]time.Duration, int, error) {
	var mu sync.Mutex
	var all []time.Duration
	var failed atomic.Int64
	var wg sync.WaitGroup
	start := time.Now()
	stop := start.Add(d)
	for i := range c.clients {
		wg.Go(func() {
			cl := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 1}}
			var mine []time.Duration
			var every time.Duration
			due := start
			if c.rate > 0 {
				every = time.Duration(c.clients) * time.Second / time.Duration(c.rate)
				due = start.Add(every * time.Duration(i) / time.Duration(c.clients)) // spread the clients
			}
			for {
				if every > 0 {
					time.Sleep(time.Until(due))
				} else {
					due = time.Now()
				}
				if due.After(stop) {
					break
				}
				s, err := getStatus(cl, c, "/k"+strconv.Itoa(rand.IntN(c.links)))
				if err != nil || s != http.StatusFound {
					failed.Add(1)
				} else {
					mine = append(mine, time.Since(due))
				}
				due = due.Add(every)
			}
			mu.Lock()
			all = append(all, mine...)
			mu.Unlock()
		})
	}
	wg.Wait()
	if len(all) == 0 {
		return nil, 0, errors.New("no redirect answered")
	}
	slices.Sort(all)
	return all, int(failed.Load()), nil
}

// loadAvg is the first three fields of /proc/loadavg: the machine's load
// when a figure was measured.
func loadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "?"
	}
	return strings.Join(f[:3], " ")
}

func pct(l []time.Duration, p float64) time.Duration { return l[int(float64(len(l)-1)*p)] }

// passwordLoad measures redirect latency on an idle server, then while
// c.attackers clients (each from its own loopback address, so no shared
// per-client bucket) post wrong passwords to the cost-12 links.
func passwordLoad(c loadConfig, pid int) error {
	if _, _, err := redirectLatency(c, 2*time.Second); err != nil { // warm-up
		return err
	}
	// The server prints its runtime's figures for each phase (SIGUSR2 at
	// its start and end).
	phase := func(name string) {
		if pid == 0 {
			return
		}
		fmt.Fprintf(os.Stderr, "%s: ", name)
		_ = syscall.Kill(pid, syscall.SIGUSR2)
		time.Sleep(100 * time.Millisecond) // the server's line comes out before the next
	}
	phase("before the idle phase")
	idleLoad := loadAvg()
	idle, idleFailed, err := redirectLatency(c, c.duration)
	phase("idle phase")
	if err != nil {
		return err
	}

	var statuses sync.Map // status -> *atomic.Int64
	count := func(s int) {
		v, _ := statuses.LoadOrStore(s, new(atomic.Int64))
		v.(*atomic.Int64).Add(1)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for a := range c.attackers {
		wg.Go(func() {
			d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.IPv4(127, 0, 3, byte(1+a))}}
			cl := &http.Client{Transport: &http.Transport{DialContext: d.DialContext, MaxIdleConnsPerHost: 1}}
			body := url.Values{"password": {"wrong guess"}}.Encode()
			for i := 0; ctx.Err() == nil; i++ {
				req, _ := http.NewRequestWithContext(ctx, "POST", "http://"+c.addr+"/p"+strconv.Itoa((a*20+i)%1000), bytes.NewBufferString(body))
				req.Host = c.host
				req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
				resp, err := cl.Do(req)
				if err != nil {
					if ctx.Err() == nil {
						count(0)
						time.Sleep(10 * time.Millisecond)
					}
					continue
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				count(resp.StatusCode)
			}
		})
	}
	time.Sleep(2 * time.Second) // every check slot busy, attackers queued
	statuses.Clear()
	phase("before the loaded phase")
	loadedLoad := loadAvg()
	loaded, loadedFailed, err := redirectLatency(c, c.duration)
	phase("loaded phase")
	statuses.Range(func(k, v any) bool {
		fmt.Printf("password answers under load: status %d: %d (%.1f/s)\n", k, v.(*atomic.Int64).Load(),
			float64(v.(*atomic.Int64).Load())/c.duration.Seconds())
		return true
	})
	cancel()
	wg.Wait()
	if err != nil {
		return err
	}
	pace := "as fast as they can"
	if c.rate > 0 {
		pace = fmt.Sprintf("%d/s in all", c.rate)
	}
	fmt.Printf("%d redirect clients, %s\n", c.clients, pace)
	fmt.Printf("idle:   %d redirects (%d failed), p50 %v, p99 %v, max %v (load average %s)\n",
		len(idle), idleFailed, pct(idle, .5), pct(idle, .99), idle[len(idle)-1], idleLoad)
	fmt.Printf("loaded: %d redirects (%d failed), p50 %v, p99 %v, max %v, %d password clients (load average %s)\n",
		len(loaded), loadedFailed, pct(loaded, .5), pct(loaded, .99), loaded[len(loaded)-1], c.attackers, loadedLoad)
	fmt.Printf("p99 loaded-idle: %v, loaded/idle: %.2f\n", pct(loaded, .99)-pct(idle, .99), float64(pct(loaded, .99))/float64(pct(idle, .99)))
	return nil
}
