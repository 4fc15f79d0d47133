package devenv_test

import (
	"context"
	"errors"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	. "github.com/onsi/gomega"

	"github.com/kurz-dev/kurz/internal/devenv"

	"github.com/kurz-dev/kurz/internal/procstop"
	"github.com/kurz-dev/kurz/internal/testenv"
)

// kurzDev is a running `kurz dev`.
type kurzDev struct {
	apiURL  string // http://127.0.0.1:PORT of the /api/v1 server
	cmd     *exec.Cmd
	out     *testenv.Output
	done    chan struct{}
	waitErr error
}

// startKurzDev runs `kurz dev` on dataDir with free API and redirect ports
// and no metrics. The test's cleanup kills it if it is still running.
func startKurzDev(t *testing.T, dataDir string, extra ...string) *kurzDev {
	t.Helper()
	apiAddr := testenv.FreeAddr(t)
	args := append([]string{"dev",
		"--data-dir", dataDir,
		"--api-addr", apiAddr,
		"--redirect-addr", testenv.FreeAddr(t),
		"--metrics-bind-address", "0",
	}, extra...)
	k := &kurzDev{apiURL: "http://" + apiAddr, cmd: exec.Command(testenv.Kurz(t), args...), out: &testenv.Output{}, done: make(chan struct{})}
	k.cmd.Dir = t.TempDir() // no ./bin/k8s there: KUBEBUILDER_ASSETS is used
	k.cmd.Stdout, k.cmd.Stderr = k.out, k.out
	if err := k.cmd.Start(); err != nil {
		t.Fatalf("start kurz dev: %v", err)
	}
	go func() { k.waitErr = k.cmd.Wait(); close(k.done) }()
	t.Cleanup(func() {
		if !k.exited() {
			_ = k.cmd.Process.Kill()
			<-k.done
		}
		if t.Failed() {
			t.Logf("kurz dev %v output:\n%s", args, k.out.String())
		}
	})
	return k
}

func (k *kurzDev) exited() bool { return procstop.Exited(k.done) }

// waitBanner waits until kurz dev says it is running; it stops waiting when
// kurz exits.
func (k *kurzDev) waitBanner(g Gomega) {
	g.Eventually(func() string {
		if k.exited() {
			StopTrying("kurz dev exited before its banner: " + k.out.String()).Now()
		}
		return k.out.String()
	}).WithTimeout(4 * time.Minute).WithPolling(200 * time.Millisecond).Should(ContainSubstring(devenv.BannerLine))
}

// exitCode waits for kurz dev to exit and returns its exit code.
func (k *kurzDev) exitCode(g Gomega) int {
	g.Eventually(k.done).WithTimeout(2 * time.Minute).Should(BeClosed())
	var exitErr *exec.ExitError
	if errors.As(k.waitErr, &exitErr) {
		return exitErr.ExitCode()
	}
	g.Expect(k.waitErr).NotTo(HaveOccurred())
	return 0
}

func (k *kurzDev) signal(g Gomega, sig syscall.Signal) {
	g.Expect(k.cmd.Process.Signal(sig)).To(Succeed())
}

// runKurzDev runs `kurz dev` to completion (or 2 minutes) and returns its
// output and exit error.
func runKurzDev(t *testing.T, dataDir string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, testenv.Kurz(t), "dev", "--data-dir", dataDir,
		"--api-addr", testenv.FreeAddr(t),
		"--redirect-addr", testenv.FreeAddr(t),
		"--metrics-bind-address", "0")
	cmd.Dir = t.TempDir()
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// controlPlaneProcesses lists the etcd and kube-apiserver processes whose
// command line mentions dataDir, as "pid name".
func controlPlaneProcesses(dataDir string) []string {
	var found []string
	for _, p := range procstop.Mentioning(dataDir) {
		if name := p.Name(); name == "etcd" || name == "kube-apiserver" {
			found = append(found, strconv.Itoa(p.PID)+" "+name)
		}
	}
	return found
}

// killControlPlane kills what controlPlaneProcesses finds; only for the
// cleanup of a failed test, whose data dir is unique to it.
func killControlPlane(dataDir string) {
	for _, p := range controlPlaneProcesses(dataDir) {
		pid, _ := strconv.Atoi(strings.Fields(p)[0])
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
}
