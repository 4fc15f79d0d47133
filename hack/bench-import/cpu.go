package main

import (
	"cmp"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/kurz-dev/kurz/internal/procstop"
)

// serverCPU is the CPU time (user and system, seconds) used so far by kurz
// dev and the etcd and kube-apiserver it started: every live process whose
// command line names the data directory. Unlike wall time it hardly
// depends on what else a shared machine runs.
func serverCPU(dir string) cpuTimes {
	t := cpuTimes{}
	for _, p := range procstop.Mentioning(dir) {
		t[p.Name()] += cpuSeconds(p.PID)
	}
	return t
}

// cpuTimes are CPU seconds by executable name.
type cpuTimes map[string]float64

// since is t less an earlier reading.
func (t cpuTimes) since(before cpuTimes) cpuTimes {
	d := cpuTimes{}
	for name, s := range t {
		d[name] = s - before[name]
	}
	return d
}

func (t cpuTimes) total() float64 {
	var sum float64
	for _, s := range t {
		sum += s
	}
	return sum
}

// perLink is "kube-apiserver 12.3 ms, etcd 4.5 ms, ..." (largest first),
// each process's CPU per link of n.
func (t cpuTimes) perLink(n int) string {
	names := slices.Collect(maps.Keys(t))
	slices.SortFunc(names, func(a, b string) int { return cmp.Compare(t[b], t[a]) })
	parts := make([]string, len(names))
	for i, name := range names {
		parts[i] = fmt.Sprintf("%s %.1f ms", name, t[name]*1000/float64(n))
	}
	return strings.Join(parts, ", ")
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
