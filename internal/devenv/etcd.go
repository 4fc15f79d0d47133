package devenv

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// DefaultEtcdQuotaBytes is the etcd quota (--quota-backend-bytes) of kurz
// dev: 8 GiB, etcd's largest recommended size, instead of its default of
// 2 GiB, which a million Links would fill (docs/scaling.md, "At a glance").
const DefaultEtcdQuotaBytes = 8 << 30

// etcdStartTimeout is how long etcd may take to become healthy: with a
// million Links it replays its log and opens a 2 GiB database, which took
// over a minute on a busy 2-core machine.
const etcdStartTimeout = 5 * time.Minute

// startAttempts bounds the retries when a child loses the race for the free
// port it was given.
const startAttempts = 3

// etcd runs etcd with its data in dataDir and a quota of quota bytes; it
// returns the client URL.
func startEtcd(ctx context.Context, ports *portPicker, path, dataDir string, quota int64, logPath string) (*child, string, error) {
	var lastErr error
	for range startAttempts {
		clientPort, err := ports.free()
		if err != nil {
			return nil, "", err
		}
		peerPort, err := ports.free()
		if err != nil {
			return nil, "", err
		}
		clientURL := "http://127.0.0.1:" + strconv.Itoa(clientPort)
		peerURL := "http://127.0.0.1:" + strconv.Itoa(peerPort)
		// The initial-* flags only matter the first time; afterwards etcd
		// reads the membership from dataDir and the peer port may change
		// freely (a single member never talks to peers).
		args := []string{
			"--name=kurz-dev",
			"--data-dir=" + dataDir,
			"--listen-client-urls=" + clientURL,
			"--advertise-client-urls=" + clientURL,
			"--listen-peer-urls=" + peerURL,
			"--initial-advertise-peer-urls=" + peerURL,
			"--initial-cluster=kurz-dev=" + peerURL,
			"--quota-backend-bytes=" + strconv.FormatInt(quota, 10),
			"--log-level=warn",
		}
		c, err := startChild("etcd", path, args, nil, logPath)
		if err != nil {
			return nil, "", err
		}
		err = waitReady(ctx, c, etcdStartTimeout, func(ctx context.Context) bool { return etcdHealthy(ctx, clientURL) })
		if err == nil {
			return c, clientURL, nil
		}
		_ = c.stop(10 * time.Second)
		if !portRace(c) {
			return nil, "", err
		}
		lastErr = err
	}
	return nil, "", lastErr
}

func etcdHealthy(ctx context.Context, clientURL string) bool {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, clientURL+"/health", nil)
	if err != nil {
		return false
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return false
	}
	defer resp.Body.Close()
	var body struct {
		Health string `json:"health"`
	}
	return resp.StatusCode == http.StatusOK && json.NewDecoder(resp.Body).Decode(&body) == nil && body.Health == "true"
}

// waitReady polls ready until it holds, the child exits, the timeout passes
// or ctx is done.
func waitReady(ctx context.Context, c *child, timeout time.Duration, ready func(context.Context) bool) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		probeCtx, probeCancel := context.WithTimeout(ctx, 2*time.Second)
		ok := ready(probeCtx)
		probeCancel()
		if ok {
			return nil
		}
		select {
		case <-c.done:
			return c.exitError()
		case <-ctx.Done():
			if errors.Is(ctx.Err(), context.DeadlineExceeded) {
				return fmt.Errorf("%s not ready after %s; last lines of %s:\n%s", c.name, timeout, c.logPath, tail(c.logPath, 15))
			}
			return ctx.Err()
		case <-tick.C:
		}
	}
}

// portRace reports whether c exited because its port was taken meanwhile.
func portRace(c *child) bool {
	return c.exited() && strings.Contains(tail(c.logPath, 50), "address already in use")
}
