package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/kurz-dev/kurz/internal/procstop"
)

// serverCPU is the CPU time (user and system, seconds) used so far by kurz
// dev and the etcd and kube-apiserver it started: every live process whose
// command line names the data directory. Unlike wall time it hardly
// depends on what else a shared machine runs.
func serverCPU(dir string) float64 {
	var sum float64
	for _, p := range procstop.Mentioning(dir) {
		sum += cpuSeconds(p.PID)
	}
	return sum
}

// cpuSeconds reads utime and stime of pid from /proc/PID/stat.
func cpuSeconds(pid int) float64 {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return 0
	}
	// The fields after the command (which may hold spaces) follow ") ".
	_, rest, ok := strings.Cut(string(b), ") ")
	if !ok {
		return 0
	}
	f := strings.Fields(rest)
	if len(f) < 13 {
		return 0
	}
	utime, _ := strconv.ParseFloat(f[11], 64)
	stime, _ := strconv.ParseFloat(f[12], 64)
	return (utime + stime) / 100 // USER_HZ
}

// loadAverage is the first field of /proc/loadavg: how busy the machine was.
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	return strings.Fields(string(b))[0]
}
