//go:build linux

package bcryptproc

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"golang.org/x/crypto/bcrypt"
)

func hash(t *testing.T, pw string, cost int) []byte {
	t.Helper()
	h, err := bcrypt.GenerateFromPassword([]byte(pw), cost)
	NewWithT(t).Expect(err).NotTo(HaveOccurred())
	return h
}

// costly is a hash of cost that no password matches, made without paying
// the cost: a cheap hash with its cost field rewritten.
func costly(t *testing.T, cost int) []byte {
	t.Helper()
	h := hash(t, "right horse", bcrypt.MinCost)
	return []byte(string(h[:4]) + strconv.Itoa(cost) + string(h[6:]))
}

func newChecker(t *testing.T, concurrency int) *Checker {
	t.Helper()
	c := New(concurrency, "")
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// TestCompare: the worker answers each comparison, right or wrong, also
// when several are in flight at once.
func TestCompare(t *testing.T) {
	g := NewWithT(t)
	c := newChecker(t, 2)
	hashes := map[string][]byte{}
	for _, pw := range []string{"right horse", "battery staple", "correct"} {
		hashes[pw] = hash(t, pw, bcrypt.MinCost)
	}
	ok, err := c.Compare(hashes["right horse"], []byte("right horse"))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(ok).To(BeTrue())
	ok, err = c.Compare(hashes["right horse"], []byte("wrong"))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(ok).To(BeFalse())
	ok, err = c.Compare([]byte("not a hash"), []byte("wrong"))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(ok).To(BeFalse())
	_, err = c.Compare(hashes["correct"], make([]byte, maxPassword+1))
	g.Expect(err).To(MatchError(ErrTooLong))

	var wg sync.WaitGroup
	for i := range 30 {
		wg.Go(func() {
			for pw, h := range hashes {
				try := pw
				if i%2 == 1 {
					try += "!"
				}
				ok, err := c.Compare(h, []byte(try))
				g.Expect(err).NotTo(HaveOccurred())
				g.Expect(ok).To(Equal(i%2 == 0), "%q against the hash of %q", try, pw)
			}
		})
	}
	wg.Wait()
}

// TestWorkerCPU: a comparison's CPU time is the worker's, not the caller's:
// no thread of the caller's runtime, and none of its GOMAXPROCS processors,
// computes bcrypt.
func TestWorkerCPU(t *testing.T) {
	g := NewWithT(t)
	c := newChecker(t, 1)
	h := costly(t, 11)
	_, err := c.Compare(hash(t, "x", bcrypt.MinCost), []byte("warm up: the worker starts"))
	g.Expect(err).NotTo(HaveOccurred())
	pid := c.Pid()
	g.Expect(pid).NotTo(BeZero())

	selfBefore, workerBefore := cpuTime(t, os.Getpid()), cpuTime(t, pid)
	ok, err := c.Compare(h, []byte("right horse"))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(ok).To(BeFalse())
	self, worker := cpuTime(t, os.Getpid())-selfBefore, cpuTime(t, pid)-workerBefore
	g.Expect(worker).To(BeNumerically(">", 0))
	g.Expect(self).To(BeNumerically("<", worker/4), "this process used %v, the worker %v", self, worker)
}

// TestWorkerIdlePriority: every thread of the worker runs under
// SCHED_IDLE, and none of the caller's does (the worker lowers its own).
func TestWorkerIdlePriority(t *testing.T) {
	g := NewWithT(t)
	c := newChecker(t, 2)
	ok, err := c.Compare(hash(t, "right horse", bcrypt.MinCost), []byte("right horse"))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(ok).To(BeTrue())
	const schedIdle = 5
	policies := threadPolicies(t, c.Pid())
	g.Expect(policies).NotTo(BeEmpty())
	for tid, p := range policies {
		g.Expect(p).To(Equal(schedIdle), "worker thread %d", tid)
	}
	g.Expect(threadPolicies(t, os.Getpid())).NotTo(ContainElement(schedIdle), "no thread of this process")
}

// TestWorkerRestarts: a comparison in flight when the worker dies fails;
// the next one starts a new worker. Close ends the worker.
func TestWorkerRestarts(t *testing.T) {
	g := NewWithT(t)
	c := newChecker(t, 1)
	slow := costly(t, 16) // seconds of CPU: still running when killed
	cheap := hash(t, "right horse", bcrypt.MinCost)
	_, err := c.Compare(cheap, []byte("start"))
	g.Expect(err).NotTo(HaveOccurred())
	first := c.Pid()

	failed := make(chan error, 1)
	go func() { _, err := c.Compare(slow, []byte("wrong")); failed <- err }()
	g.Eventually(func() time.Duration { return cpuTime(t, first) }, 10*time.Second).Should(BeNumerically(">", 0))
	g.Expect(syscall.Kill(first, syscall.SIGKILL)).To(Succeed())
	g.Eventually(failed, 30*time.Second).Should(Receive(MatchError(ContainSubstring("worker ended"))))

	ok, err := c.Compare(cheap, []byte("right horse"))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(ok).To(BeTrue())
	second := c.Pid()
	g.Expect(second).NotTo(BeZero())
	g.Expect(second).NotTo(Equal(first))

	g.Expect(c.Close()).To(Succeed())
	g.Expect(c.Pid()).To(BeZero())
	_, err = os.Stat(filepath.Join("/proc", strconv.Itoa(second)))
	g.Expect(os.IsNotExist(err)).To(BeTrue(), "the worker is gone and reaped")
	_, err = c.Compare(cheap, []byte("right horse"))
	g.Expect(err).To(HaveOccurred())
}

// TestWorkerEndsWithInput: the worker exits once its input closes, as it
// does when the process that started it dies.
func TestWorkerEndsWithInput(t *testing.T) {
	g := NewWithT(t)
	w, err := startWorker(selfExe(), 1)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(w.in.Close()).To(Succeed())
	g.Eventually(w.done, 10*time.Second).Should(BeClosed())
	g.Expect(w.cmd.ProcessState.ExitCode()).To(BeZero())
}

// cpuTime is pid's user and system time, from /proc.
func cpuTime(t *testing.T, pid int) time.Duration {
	t.Helper()
	f := statFields(t, filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	utime, _ := strconv.Atoi(f[14-3])
	stime, _ := strconv.Atoi(f[15-3])
	return time.Duration(utime+stime) * time.Second / 100 // USER_HZ
}

// threadPolicies maps each thread of pid to its scheduling policy.
func threadPolicies(t *testing.T, pid int) map[int]int {
	t.Helper()
	dir := filepath.Join("/proc", strconv.Itoa(pid), "task")
	entries, err := os.ReadDir(dir)
	NewWithT(t).Expect(err).NotTo(HaveOccurred())
	out := map[int]int{}
	for _, e := range entries {
		tid, _ := strconv.Atoi(e.Name())
		raw, err := os.ReadFile(filepath.Join(dir, e.Name(), "stat"))
		if err != nil {
			continue // ended meanwhile
		}
		f := fieldsAfterComm(string(raw))
		out[tid], _ = strconv.Atoi(f[41-3])
	}
	return out
}

// statFields are a /proc stat file's fields from the third (the state) on:
// the second, the command name, may hold spaces.
func statFields(t *testing.T, path string) []string {
	t.Helper()
	raw, err := os.ReadFile(path)
	NewWithT(t).Expect(err).NotTo(HaveOccurred())
	return fieldsAfterComm(string(raw))
}

func fieldsAfterComm(s string) []string {
	return strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
}
