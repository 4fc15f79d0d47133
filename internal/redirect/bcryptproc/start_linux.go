package bcryptproc

import (
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// selfExe is the running executable, also after it was replaced on disk.
func selfExe() string { return "/proc/self/exe" }

// lowerPriority gives every thread of the worker the SCHED_IDLE policy
// (nice 19 where that is refused): the kernel runs them only when no other
// thread wants the CPU. A thread inherits its creator's policy, so once
// every thread has it, every later one has it too; passes repeat until one
// finds no thread it had not set (one may have been created, by a thread
// not yet set, during the pass before). The worker sets its own threads so
// that no thread of the server ever runs at a lowered priority.
func lowerPriority() error {
	done := map[int]bool{}
	for {
		entries, err := os.ReadDir("/proc/self/task")
		if err != nil {
			return err
		}
		found := false
		for _, e := range entries {
			tid, err := strconv.Atoi(e.Name())
			if err != nil || done[tid] {
				continue
			}
			found, done[tid] = true, true
			if err := unix.SchedSetAttr(tid, &unix.SchedAttr{Size: unix.SizeofSchedAttr, Policy: unix.SCHED_IDLE}, 0); err != nil {
				if err := unix.Setpriority(unix.PRIO_PROCESS, tid, 19); err != nil && err != unix.ESRCH {
					return err
				}
			}
		}
		if !found {
			return nil
		}
	}
}
