package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/kurz-dev/kurz/internal/freeport"
	"github.com/kurz-dev/kurz/internal/procstop"
)

// managerProc is a running `kurz manager`.
type managerProc struct {
	cmd                          *exec.Cmd
	started                      time.Time
	api, redirect, health, pprof string
	metrics                      string // plain HTTP
	done                         chan struct{}
}

// startManager starts kurz manager with every role against the control
// plane of kubeconfig, its output in logPath.
func startManager(c config, kubeconfig, logPath string) (*managerProc, error) {
	m := &managerProc{done: make(chan struct{})}
	for _, p := range []*string{&m.api, &m.redirect, &m.health, &m.pprof, &m.metrics} {
		a, err := freeport.Addr()
		if err != nil {
			return nil, err
		}
		*p = a
	}
	logFile, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	args := append([]string{"manager",
		"--api-bind-address=" + m.api,
		"--redirect-bind-address=" + m.redirect,
		"--health-probe-bind-address=" + m.health,
		"--pprof-bind-address=" + m.pprof,
		"--metrics-bind-address=" + m.metrics,
		"--metrics-secure=false",
		"--api-rate-limit=0",
		"--shutdown-delay=0s",
	}, c.extraArgs...)
	m.cmd = exec.Command(c.kurz, args...)
	m.cmd.Env = append(append(os.Environ(), "KUBECONFIG="+kubeconfig), c.extraEnv...)
	m.cmd.Stdout, m.cmd.Stderr = logFile, logFile
	m.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	m.started = time.Now()
	if err := m.cmd.Start(); err != nil {
		_ = logFile.Close()
		return nil, err
	}
	go func() {
		_ = m.cmd.Wait()
		_ = logFile.Close()
		close(m.done)
	}()
	return m, nil
}

// stop sends SIGTERM and waits for the exit.
func (m *managerProc) stop() {
	_, _ = procstop.Stop(m.cmd.Process, m.done, 60*time.Second)
}

func (m *managerProc) exited() bool { return procstop.Exited(m.done) }

// rssParts reads RssAnon and RssFile of pid, in bytes: the heap and
// stacks against the binary's pages (and other mapped files).
func rssParts(pid int) (anon, file int64) {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "status"))
	if err != nil {
		return 0, 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		k, v, ok := strings.Cut(line, ":")
		fields := strings.Fields(v)
		if !ok || len(fields) == 0 {
			continue
		}
		kb, _ := strconv.ParseInt(fields[0], 10, 64)
		switch k {
		case "RssAnon":
			anon = kb << 10
		case "RssFile":
			file = kb << 10
		}
	}
	return anon, file
}

// procStatus reads VmRSS and VmHWM (peak RSS) of pid, in bytes.
func procStatus(pid int) (rss, peak int64) {
	f, err := os.Open(filepath.Join("/proc", strconv.Itoa(pid), "status"))
	if err != nil {
		return 0, 0
	}
	defer func() { _ = f.Close() }()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		fields := strings.Fields(v)
		if len(fields) == 0 {
			continue
		}
		kb, _ := strconv.ParseInt(fields[0], 10, 64)
		switch k {
		case "VmRSS":
			rss = kb << 10
		case "VmHWM":
			peak = kb << 10
		}
	}
	return rss, peak
}

// saveHeapProfile fetches a heap profile (after a GC) from the manager's
// pprof endpoint into path and returns `go tool pprof -top` of it.
func saveHeapProfile(ctx context.Context, m *managerProc, path string) (string, error) {
	if err := saveURL(ctx, "http://"+m.pprof+"/debug/pprof/heap?gc=1", path); err != nil {
		return "", err
	}
	out, err := exec.CommandContext(ctx, "go", "tool", "pprof", "-top", "-sample_index=inuse_space", path).CombinedOutput()
	return string(out), err
}

// startCPUProfile fetches a CPU profile of the manager's next d into path
// in the background (the profiler listens early in the start) and returns
// a function that waits for it and returns `go tool pprof -top` of it.
func startCPUProfile(ctx context.Context, m *managerProc, d time.Duration, path string) func() string {
	return startCPUProfileAfter(ctx, m, 0, d, path)
}

// startCPUProfileAfter is startCPUProfile beginning after delay.
func startCPUProfileAfter(ctx context.Context, m *managerProc, delay, d time.Duration, path string) func() string {
	return profileLater(ctx, delay, "cpu profile", path, func() error {
		url := fmt.Sprintf("http://%s/debug/pprof/profile?seconds=%d", m.pprof, int(d.Seconds()))
		var err error
		for range 100 { // until the profiler listens
			if err = saveURL(ctx, url, path); !errors.Is(err, syscall.ECONNREFUSED) {
				return err
			}
			time.Sleep(20 * time.Millisecond)
		}
		return err
	})
}

// profileLater runs fetch, which writes a profile to path, in the
// background after delay, and returns a function that waits for it and
// returns `go tool pprof -top` of the profile, or what failed.
func profileLater(ctx context.Context, delay time.Duration, what, path string, fetch func() error) func() string {
	out := make(chan string, 1)
	go func() {
		select {
		case <-ctx.Done():
			out <- ""
			return
		case <-time.After(delay):
		}
		if err := fetch(); err != nil {
			out <- what + ": " + err.Error()
			return
		}
		top, _ := exec.CommandContext(ctx, "go", "tool", "pprof", "-top", path).CombinedOutput()
		out <- string(top)
	}()
	return func() string { return <-out }
}

// uptime is the first line of /proc/loadavg: the load every timing figure
// is measured under.
func uptime() string {
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
