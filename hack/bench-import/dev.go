package main

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"time"

	"github.com/kurz-dev/kurz/internal/freeport"
	"github.com/kurz-dev/kurz/internal/procstop"
	"github.com/kurz-dev/kurz/internal/testenv"
)

// dev is one `kurz dev` process.
type dev struct {
	dir, apiAddr string
	cmd          *exec.Cmd
	log          *testenv.Output
	done         chan struct{}
}

// startDev starts kurz dev on dir with free ports (extra flags added) and
// waits until its API answers with the token it wrote.
func startDev(ctx context.Context, kurz, dir string, extra ...string) (*dev, error) {
	var addrs [2]string
	for i := range addrs {
		a, err := freeport.Addr()
		if err != nil {
			return nil, err
		}
		addrs[i] = a
	}
	d := &dev{dir: dir, apiAddr: addrs[0], log: &testenv.Output{}, done: make(chan struct{})}
	d.cmd = exec.Command(kurz, append([]string{"dev", "--data-dir", dir, "--api-addr", addrs[0], "--redirect-addr", addrs[1],
		"--metrics-bind-address", "0"}, extra...)...)
	d.cmd.Stdout, d.cmd.Stderr = d.log, d.log
	d.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := d.cmd.Start(); err != nil {
		return nil, fmt.Errorf("start kurz dev: %w", err)
	}
	go func() { _ = d.cmd.Wait(); close(d.done) }()
	deadline := time.Now().Add(5 * time.Minute)
	for {
		if procstop.Exited(d.done) {
			return nil, fmt.Errorf("kurz dev exited:\n%s", d.log)
		}
		if d.ready(ctx) {
			return d, nil
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			d.stop()
			return nil, fmt.Errorf("kurz dev not ready after 5 minutes (%v):\n%s", ctx.Err(), d.log)
		}
		time.Sleep(250 * time.Millisecond) // polling a process that is starting
	}
}

func (d *dev) ready(ctx context.Context) bool {
	token, err := d.token()
	if err != nil {
		return false
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+d.apiAddr+"/api/v1/links", nil)
	if err != nil {
		return false
	}
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return false
	}
	_ = resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

func (d *dev) tokenFile() string { return filepath.Join(d.dir, "token") }

func (d *dev) token() (string, error) {
	b, err := os.ReadFile(d.tokenFile())
	return strings.TrimSpace(string(b)), err
}

func (d *dev) client(ctx context.Context) apiClient {
	token, _ := d.token()
	return apiClient{ctx: ctx, base: "http://" + d.apiAddr, token: token}
}

// stop ends kurz dev (SIGTERM, then SIGKILL after a minute).
func (d *dev) stop() { _, _ = procstop.Stop(d.cmd.Process, d.done, time.Minute) }

func numCPU() int { return runtime.NumCPU() }
