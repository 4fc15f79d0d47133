package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"time"

	"github.com/kurz-dev/kurz/internal/analytics/capture"
	"github.com/kurz-dev/kurz/internal/devenv"
)

// emptyWait is how long after /readyz the empty replica's RSS is read:
// past its start's allocations, as the 10 s of a start's figure.
const emptyWait = 30 * time.Second

// measureEmpty starts the manager against the control plane before any
// Link is loaded (the Domain only) and records its RSS: what a replica
// costs with no Link, so that the RSS per link can be given both as the
// total over N and as the marginal (RSS(N) - RSS(empty)) / N. The same
// binary, flags and environment as the measured starts.
func measureEmpty(ctx context.Context, c config, env *devenv.Env, r *results) error {
	kubeconfig, err := filepath.Abs(env.Kubeconfig())
	if err != nil {
		return err
	}
	m, err := startManager(c, kubeconfig, filepath.Join(c.outDir, "manager-0-empty.log"))
	if err != nil {
		return err
	}
	defer m.stop()
	logf("empty replica started (pid %d)", m.cmd.Process.Pid)
	if err := waitReady(ctx, c, m); err != nil {
		return fmt.Errorf("empty replica: %w", err)
	}
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(emptyWait):
	}
	r.emptyRSS, _ = procStatus(m.cmd.Process.Pid)
	r.emptyAnon, r.emptyFile = rssParts(m.cmd.Process.Pid)
	if r.emptyHeapTop, err = saveHeapProfile(ctx, m, filepath.Join(c.outDir, "heap-empty.pprof")); err != nil {
		logf("heap profile: %v", err)
	}
	logf("empty replica: RSS %s", mib(r.emptyRSS))
	return nil
}

// waitReady polls /readyz until it passes.
func waitReady(ctx context.Context, c config, m *managerProc) error {
	cl := &http.Client{Timeout: 2 * time.Second}
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
		}
		if m.exited() {
			return errors.New("kurz manager exited; see its log")
		}
		resp, err := cl.Get("http://" + m.health + "/readyz")
		if err == nil {
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		if time.Since(m.started) > c.serveTimeout {
			return fmt.Errorf("not ready after %s (-serve-timeout)", c.serveTimeout)
		}
	}
}

// analyticsOn tells whether the manager's flags turn click analytics on
// (kurz manager's default is off).
func analyticsOn(c config) bool {
	for _, a := range c.extraArgs {
		if a == "--analytics" || a == "--analytics=true" || strings.HasPrefix(a, "--analytics-store=") {
			return true
		}
	}
	return false
}

// analyticsNote is the analytics capture's memory, reported apart from
// the per-link figures: its buffers are bounded by their own sizes
// (capture.Options.MemoryBound), not by the Links.
func analyticsNote(c config) string {
	bound := fmt.Sprintf("%d MiB", capture.DefaultOptions().MemoryBound()>>20)
	if analyticsOn(c) {
		return "on: its capture holds at most " + bound + ", inside every RSS above"
	}
	return "off (kurz manager's default): none of the RSS above; on, its capture holds at most " + bound
}
