package procstop

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Proc is a live process Mentioning found.
type Proc struct {
	PID  int
	Args []string
}

// Name is the base name of the process's executable, as started.
func (p Proc) Name() string { return filepath.Base(p.Args[0]) }

// Mentioning lists the live processes (zombies are already dead) whose
// command line mentions s: the etcd and kube-apiserver kurz dev started for
// a data dir, so that a test can check none outlived it.
func Mentioning(s string) []Proc {
	var found []Proc
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		raw, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil || len(raw) == 0 || !strings.Contains(string(raw), s) || state(pid) == "Z" {
			continue
		}
		found = append(found, Proc{PID: pid, Args: strings.Split(strings.TrimRight(string(raw), "\x00"), "\x00")})
	}
	return found
}

// state is the one-letter state of pid in /proc/PID/stat, "" when unknown.
func state(pid int) string {
	raw, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return ""
	}
	// pid (comm) S ...: the state follows the last ')'.
	s := string(raw)
	if i := strings.LastIndexByte(s, ')'); i >= 0 && i+2 < len(s) {
		return s[i+2 : i+3]
	}
	return ""
}
