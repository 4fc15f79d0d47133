package devenv

import (
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"time"

	"github.com/kurz-dev/kurz/internal/procstop"
)

// child is a control plane process started by kurz dev.
type child struct {
	name    string
	logPath string
	cmd     *exec.Cmd
	done    chan struct{} // closed once the process has exited
	waitErr error         // exit status; read only after done is closed
}

// startChild starts path with args and kurz dev's environment plus env
// (later entries win), its output going to logPath (truncated).
func startChild(name, path string, args, env []string, logPath string) (*child, error) {
	logf, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open %s log: %w", name, err)
	}
	cmd := exec.Command(path, args...)
	if env != nil {
		cmd.Env = append(os.Environ(), env...)
	}
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = childSysProcAttr()
	c := &child{name: name, logPath: logPath, cmd: cmd, done: make(chan struct{})}
	started := make(chan error, 1)
	go func() {
		defer close(c.done)
		defer logf.Close()
		// Pdeathsig is sent when the *thread* that forked the child exits,
		// not the process. Pin this goroutine to its thread until the child
		// is gone so the Go runtime never retires that thread under it.
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		if err := cmd.Start(); err != nil {
			c.waitErr = err
			started <- err
			return
		}
		started <- nil
		c.waitErr = cmd.Wait()
	}()
	if err := <-started; err != nil {
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	return c, nil
}

// exited reports whether the process is gone.
func (c *child) exited() bool { return procstop.Exited(c.done) }

// exitError describes an unexpected exit, with the end of the log.
func (c *child) exitError() error {
	return fmt.Errorf("%s exited: %v; last lines of %s:\n%s", c.name, c.waitErr, c.logPath, tail(c.logPath, 15))
}

// stop sends SIGTERM, waits up to grace for the process to exit and kills
// it after that. It returns once the process is gone.
func (c *child) stop(grace time.Duration) error {
	killed, err := procstop.Stop(c.cmd.Process, c.done, grace)
	if err != nil {
		return fmt.Errorf("stop %s: %w", c.name, err)
	}
	if killed {
		return fmt.Errorf("%s did not stop within %s and was killed", c.name, grace)
	}
	return nil
}
