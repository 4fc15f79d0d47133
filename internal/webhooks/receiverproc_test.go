package webhooks_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"

	. "github.com/onsi/gomega"
)

// pinProcess pins every thread of pid to cpu; threads made later are
// cloned from pinned ones and keep it.
func pinProcess(b *testing.B, pid, cpu int) {
	out, err := exec.Command("taskset", "-a", "-p", "-c", strconv.Itoa(cpu), strconv.Itoa(pid)).CombinedOutput()
	NewWithT(b).Expect(err).NotTo(HaveOccurred(), "%s", out)
}

// childPIDs are the processes pid started (the suite's etcd and
// kube-apiserver), from /proc.
func childPIDs(pid int) []int {
	var pids []int
	tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/children", pid))
	for _, t := range tasks {
		data, _ := os.ReadFile(t)
		for _, f := range strings.Fields(string(data)) {
			if n, err := strconv.Atoi(f); err == nil {
				pids = append(pids, n)
			}
		}
	}
	return pids
}

// lastCPU is the core the benchmark gives wrk, the receiver and the
// control plane; -1 on a single core (nothing is pinned).
func lastCPU() int {
	if n := runtime.NumCPU(); n >= 2 {
		return n - 1
	}
	return -1
}
