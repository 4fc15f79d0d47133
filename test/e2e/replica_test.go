package e2e

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kurz-dev/kurz/internal/procstop"
	"github.com/kurz-dev/kurz/internal/testenv"
)

// leaseDuration and the other leader election durations are short so that
// a freeze outlasts the Lease and a standby takes over within seconds.
const (
	leaseDuration = 4 * time.Second
	renewDeadline = 3 * time.Second
	retryPeriod   = time.Second
)

// replica is one `bin/kurz manager` process of a Deployment, run against
// kurz dev's control plane with its own ports and click spool.
type replica struct {
	name       string
	kubeconfig string
	spool      string
	redirect   string // redirect server address
	metrics    string
	health     string
	api        string
	// args and env are more flags and environment variables of this
	// replica's kurz manager: its roles, its analytics store.
	args []string
	env  []string

	cmd  *exec.Cmd
	log  *testenv.Output
	done chan struct{} // closed when the process has exited
	err  error         // its exit, once done is closed
}

// newReplica picks the ports and the spool file of a replica; start runs it.
func newReplica(t testing.TB, name, kubeconfig, dir string) *replica {
	return &replica{
		name: name, kubeconfig: kubeconfig, spool: filepath.Join(dir, name+".spool"),
		redirect: testenv.FreeAddr(t), metrics: testenv.FreeAddr(t), health: testenv.FreeAddr(t), api: testenv.FreeAddr(t),
	}
}

// start runs the replica (again, after a stop: same ports, same spool).
func (r *replica) start(t testing.TB) {
	t.Helper()
	r.log = &testenv.Output{}
	r.done = make(chan struct{})
	r.cmd = exec.Command(kurzBin(t), "manager",
		"--leader-elect", "--leader-election-namespace", "default",
		"--leader-election-lease-duration", leaseDuration.String(),
		"--leader-election-renew-deadline", renewDeadline.String(),
		"--leader-election-retry-period", retryPeriod.String(),
		"--api-bind-address", r.api,
		"--redirect-bind-address", r.redirect,
		"--metrics-bind-address", r.metrics,
		// The test reads kurz_leader without a token.
		"--metrics-secure=false",
		"--health-probe-bind-address", r.health,
		"--click-flush-interval", flushInterval.String(),
		"--click-spool", r.spool,
		"--shutdown-delay", shutdownDelay.String(),
	)
	r.cmd.Args = append(r.cmd.Args, r.args...)
	r.cmd.Env = append(append(os.Environ(), "KUBECONFIG="+r.kubeconfig), r.env...)
	r.cmd.Stdout, r.cmd.Stderr = r.log, r.log
	if err := r.cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", r.name, err)
	}
	go func() {
		r.err = r.cmd.Wait()
		close(r.done)
	}()
}

// exited says whether the process has ended, and how.
func (r *replica) exited() (bool, error) {
	select {
	case <-r.done:
		return true, r.err
	default:
		return false, nil
	}
}

// stop sends sig and waits up to wait for the exit.
func (r *replica) stop(t testing.TB, sig syscall.Signal, wait time.Duration) error {
	t.Helper()
	if err := r.cmd.Process.Signal(sig); err != nil {
		t.Fatalf("signal %s: %v", r.name, err)
	}
	select {
	case <-r.done:
		return r.err
	case <-time.After(wait):
		t.Fatalf("%s did not exit within %v of %v; log:\n%s", r.name, wait, sig, r.log.Tail(60))
		return nil
	}
}

// kill ends the process whatever state it is in; for cleanup.
func (r *replica) kill() {
	if r.cmd == nil || r.cmd.Process == nil {
		return
	}
	_, _ = procstop.Stop(r.cmd.Process, r.done, 30*time.Second)
}

// ready asks the replica's readiness probe.
func (r *replica) ready() error {
	resp, err := http.Get("http://" + r.health + "/readyz")
	if err != nil {
		return err
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s /readyz: %d %s", r.name, resp.StatusCode, body)
	}
	return nil
}

// leads reads the kurz_leader gauge from the replica's metrics: 1 while it
// holds the Lease and runs the controllers.
func (r *replica) leads() (bool, error) {
	resp, err := http.Get("http://" + r.metrics + "/metrics")
	if err != nil {
		return false, err
	}
	defer resp.Body.Close()
	s := bufio.NewScanner(resp.Body)
	s.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for s.Scan() {
		line := s.Text()
		if !strings.HasPrefix(line, "kurz_leader ") {
			continue
		}
		fields := strings.Fields(line)
		v, err := strconv.ParseFloat(fields[len(fields)-1], 64)
		if err != nil {
			return false, fmt.Errorf("%s: %q: %w", r.name, line, err)
		}
		if v == 1 {
			return true, nil
		}
	}
	// Absent until the first campaign ends: not leading.
	return false, s.Err()
}

// childProcess finds the child of parent whose command is name, through
// /proc: kurz dev's kube-apiserver or etcd.
func childProcess(parent int, name string) (int, error) {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return 0, err
	}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		comm, ppid, _, err := procStat(pid)
		if err != nil || ppid != parent || comm != name {
			continue
		}
		return pid, nil
	}
	return 0, fmt.Errorf("no child %q of pid %d", name, parent)
}

// procStat reads a process's command name, parent and state (R, S, T for
// stopped, ...) from /proc/PID/stat.
func procStat(pid int) (comm string, ppid int, state string, err error) {
	data, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return "", 0, "", err
	}
	// "pid (comm) state ppid ...": comm may hold spaces and parentheses.
	open, closing := bytes.IndexByte(data, '('), bytes.LastIndexByte(data, ')')
	if open < 0 || closing < open {
		return "", 0, "", fmt.Errorf("/proc/%d/stat: %q", pid, data)
	}
	fields := strings.Fields(string(data[closing+1:]))
	if len(fields) < 2 {
		return "", 0, "", fmt.Errorf("/proc/%d/stat: %q", pid, data)
	}
	ppid, err = strconv.Atoi(fields[1])
	return string(data[open+1 : closing]), ppid, fields[0], err
}
