package main

import (
	"cmp"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"

	"github.com/kurz-dev/kurz/hack/internal/procstat"
	"github.com/kurz-dev/kurz/internal/procstop"
)

// serverCPU is the CPU time (user and system, seconds) used so far by kurz
// dev and the etcd and kube-apiserver it started: every live process whose
// command line names the data directory. Unlike wall time it hardly
// depends on what else a shared machine runs.
func serverCPU(dir string) cpuTimes {
	t := cpuTimes{}
	for _, p := range procstop.Mentioning(dir) {
		t[p.Name()] += procstat.CPUSeconds(p.PID)
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

// loadAverage is the first field of /proc/loadavg: how busy the machine was.
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	return strings.Fields(string(b))[0]
}
