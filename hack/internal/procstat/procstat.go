// Package procstat reads what the benchmarks report of a process from
// /proc: the CPU time it has used, which unlike wall time hardly depends on
// what else the machine runs.
package procstat

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
)

// userHZ is the unit of /proc/PID/stat's times: Linux reports them in
// ticks of 1/100 s to user space whatever the kernel's own rate.
const userHZ = 100

// CPUSeconds is the CPU time pid has used, user and system, from
// /proc/PID/stat; 0 when it cannot be read (the process is gone, or this
// is not Linux).
func CPUSeconds(pid int) float64 {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return 0
	}
	s, _ := cpuSeconds(b)
	return s
}

// cpuSeconds reads utime and stime from the contents of a /proc/PID/stat.
// The fields follow the command in parentheses, which may itself hold
// spaces and parentheses, so they start after the last ')'.
func cpuSeconds(stat []byte) (float64, bool) {
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 {
		return 0, false
	}
	// After ')': state (field 3), ..., utime (14) and stime (15).
	f := bytes.Fields(stat[i+1:])
	if len(f) < 13 {
		return 0, false
	}
	utime, err1 := strconv.ParseUint(string(f[11]), 10, 64)
	stime, err2 := strconv.ParseUint(string(f[12]), 10, 64)
	if err1 != nil || err2 != nil {
		return 0, false
	}
	return float64(utime+stime) / userHZ, true
}
