package devenv

import "syscall"

// childSysProcAttr puts a child in its own process group, so that the
// terminal's Ctrl-C reaches kurz only and kurz stops the children in order,
// and has the kernel kill it when kurz dies, even by SIGKILL.
func childSysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
