package e2e

import (
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	. "github.com/onsi/gomega"

	"github.com/kurz-dev/kurz/internal/procstop"
	"github.com/kurz-dev/kurz/internal/testenv"
)

// kurzDev is one `bin/kurz dev` process and what a user reads off it.
type kurzDev struct {
	dataDir      string
	apiAddr      string
	redirectAddr string
	cmd          *exec.Cmd
	// log is everything the process wrote, stdout and stderr: guarded by a
	// mutex, so a test may read it while kurz dev writes (the console's
	// log test searches it for secrets).
	log  *testenv.Output
	done chan error
}

// startKurzDev starts kurz dev on dataDir and waits until its API answers
// with the token it wrote, as a user following the banner would. extra are
// more flags of kurz dev.
func startKurzDev(t testing.TB, dataDir, apiAddr, redirectAddr string, extra ...string) *kurzDev {
	t.Helper()
	k := &kurzDev{dataDir: dataDir, apiAddr: apiAddr, redirectAddr: redirectAddr, log: &testenv.Output{}, done: make(chan error, 1)}
	k.cmd = exec.Command(kurzBin(t), append([]string{"dev",
		"--data-dir", dataDir,
		"--api-addr", apiAddr,
		"--redirect-addr", redirectAddr,
		"--metrics-bind-address", "0",
		"--click-flush-interval", flushInterval.String(),
	}, extra...)...)
	k.cmd.Stdout, k.cmd.Stderr = k.log, k.log
	if err := k.cmd.Start(); err != nil {
		t.Fatalf("start kurz dev: %v", err)
	}
	go func() { k.done <- k.cmd.Wait() }()

	NewWithT(t).Eventually(func(g Gomega) {
		select {
		case err := <-k.done:
			k.done <- err
			g.Expect(err).NotTo(HaveOccurred(), "kurz dev exited early:\n%s", k.log)
		default:
		}
		resp, err := http.DefaultClient.Do(k.request(t, http.MethodGet, "/api/v1/links", nil))
		g.Expect(err).NotTo(HaveOccurred())
		resp.Body.Close()
		g.Expect(resp.StatusCode).To(Equal(http.StatusOK))
	}).WithTimeout(3*time.Minute).WithPolling(250*time.Millisecond).Should(Succeed(), "kurz dev API ready; log:\n%s", k.log)
	return k
}

// token is what the user copies from DIR/token.
func (k *kurzDev) token(t testing.TB) string {
	data, err := os.ReadFile(filepath.Join(k.dataDir, "token"))
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(data))
}

// stop sends sig and waits for kurz dev to exit.
func (k *kurzDev) stop(t testing.TB, sig syscall.Signal) error {
	t.Helper()
	if err := k.cmd.Process.Signal(sig); err != nil {
		t.Fatalf("signal kurz dev: %v", err)
	}
	select {
	case err := <-k.done:
		return err
	case <-time.After(2 * time.Minute):
		t.Fatalf("kurz dev did not exit after %v; log:\n%s", sig, k.log)
		return nil
	}
}

// kubectl runs the control plane's kubectl against kurz dev's kubeconfig.
func (k *kurzDev) kubectl(stdin string, args ...string) (string, error) {
	cmd := exec.Command(kubectlBin, args...)
	cmd.Env = append(os.Environ(), "KUBECONFIG="+filepath.Join(k.dataDir, "kubeconfig"))
	if stdin != "" {
		cmd.Stdin = strings.NewReader(stdin)
	}
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// processesUsing lists the processes whose command line mentions dir: the
// control-plane processes kurz dev started for it, as "pid: command line".
func processesUsing(dir string) []string {
	var pids []string
	for _, p := range procstop.Mentioning(dir) {
		pids = append(pids, fmt.Sprintf("%d: %s", p.PID, strings.Join(p.Args, " ")))
	}
	return pids
}
