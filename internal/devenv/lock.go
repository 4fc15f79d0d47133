package devenv

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// dirLock is an exclusive flock on DIR/lock. The kernel drops it when the
// process dies, so a killed kurz dev never leaves a stale lock behind.
type dirLock struct{ f *os.File }

// lockDir takes the lock of dir or fails at once, naming the holder.
func lockDir(dir string) (*dirLock, error) {
	path := filepath.Join(dir, "lock")
	// os.OpenFile sets O_CLOEXEC, so etcd and kube-apiserver do not inherit
	// the lock and cannot keep it after kurz is gone.
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open lock: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		holder, _ := os.ReadFile(path)
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			pid := strings.TrimSpace(string(holder))
			if pid == "" {
				pid = "unknown"
			}
			return nil, fmt.Errorf("data dir %s is in use by another kurz dev (pid %s): stop it first or pass another --data-dir", dir, pid)
		}
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	// The pid is only a hint for the error above; the flock is the lock.
	if err := f.Truncate(0); err == nil {
		_, _ = f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	}
	return &dirLock{f: f}, nil
}

// unlock releases the lock. The file stays: removing it would race with a
// new kurz dev that already opened it.
func (l *dirLock) unlock() error {
	if l == nil || l.f == nil {
		return nil
	}
	err := l.f.Close() // closing the last descriptor releases the flock
	l.f = nil
	return err
}
