// Package procstop ends child processes the one way kurz does it wherever
// it runs them (kurz dev's etcd and kube-apiserver, the end-to-end
// replicas, bench-scale's manager): SIGTERM, a grace period, then SIGKILL.
// A process is represented by its os.Process and a channel closed once its
// Wait returned.
package procstop

import (
	"errors"
	"fmt"
	"os"
	"syscall"
	"time"
)

// Exited reports whether done is closed: the process is gone.
func Exited(done <-chan struct{}) bool {
	select {
	case <-done:
		return true
	default:
		return false
	}
}

// Stop sends SIGTERM to p unless it has exited, waits up to grace for done
// and kills p after that. It returns once done is closed; killed says
// whether it had to kill. An error is a SIGTERM that could not be sent.
func Stop(p *os.Process, done <-chan struct{}, grace time.Duration) (killed bool, err error) {
	if Exited(done) {
		return false, nil
	}
	if err := p.Signal(syscall.SIGTERM); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return false, fmt.Errorf("send SIGTERM: %w", err)
	}
	select {
	case <-done:
		return false, nil
	case <-time.After(grace):
	}
	_ = p.Kill()
	<-done
	return true, nil
}
