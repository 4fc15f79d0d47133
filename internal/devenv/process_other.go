//go:build !linux

package devenv

import "syscall"

// childSysProcAttr puts a child in its own process group, so that the
// terminal's Ctrl-C reaches kurz only. Without Pdeathsig (Linux only) the
// children outlive a SIGKILLed kurz.
func childSysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}
