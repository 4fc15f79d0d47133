package redirect

import "syscall"

// lowerThreadPriority lowers the calling OS thread's scheduling priority
// (nice 10), for a comparison made in this process (passwords.compare). On
// Linux PRIO_PROCESS with a thread id affects that thread only. Raising a
// nice value needs no privilege; a failure leaves the thread as it was,
// which only costs the redirects some latency.
func lowerThreadPriority() {
	_ = syscall.Setpriority(syscall.PRIO_PROCESS, syscall.Gettid(), checkNice)
}
