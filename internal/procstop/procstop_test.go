package procstop_test

import (
	"os/exec"
	"testing"
	"time"

	. "github.com/onsi/gomega"

	"github.com/kurz-dev/kurz/internal/procstop"
)

// start runs a shell script and returns it with the channel closed when it
// has exited.
func start(t *testing.T, script string) (*exec.Cmd, chan struct{}) {
	t.Helper()
	cmd := exec.Command("sh", "-c", script)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	return cmd, done
}

func TestStopTerminates(t *testing.T) {
	g := NewWithT(t)
	cmd, done := start(t, "sleep 60")
	g.Expect(procstop.Exited(done)).To(BeFalse())
	killed, err := procstop.Stop(cmd.Process, done, time.Minute)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(killed).To(BeFalse(), "sleep ends on SIGTERM")
	g.Expect(procstop.Exited(done)).To(BeTrue())
	killed, err = procstop.Stop(cmd.Process, done, time.Minute)
	g.Expect(err).NotTo(HaveOccurred(), "stopping a stopped process is a no-op")
	g.Expect(killed).To(BeFalse())
}

func TestStopKillsAfterGrace(t *testing.T) {
	g := NewWithT(t)
	// The shell ignores SIGTERM; "ready" says the trap is set.
	cmd := exec.Command("sh", "-c", "trap '' TERM; echo ready; while :; do sleep 1; done")
	out, err := cmd.StdoutPipe()
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(cmd.Start()).To(Succeed())
	buf := make([]byte, 5)
	_, err = out.Read(buf)
	g.Expect(err).NotTo(HaveOccurred())
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	killed, err := procstop.Stop(cmd.Process, done, 100*time.Millisecond)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(killed).To(BeTrue())
	g.Expect(procstop.Exited(done)).To(BeTrue())
}

func TestMentioningFindsLiveProcessesOnly(t *testing.T) {
	g := NewWithT(t)
	marker := t.TempDir()
	cmd, done := start(t, "sleep 60; : "+marker)
	t.Cleanup(func() { _, _ = procstop.Stop(cmd.Process, done, time.Second) })
	// Between its fork and its exec, the child sh starts for sleep still
	// has sh's command line, marker and all: wait for the exec.
	var found []procstop.Proc
	g.Eventually(func() []procstop.Proc {
		found = procstop.Mentioning(marker)
		return found
	}).WithTimeout(20 * time.Second).Should(HaveLen(1))
	g.Expect(found[0].PID).To(Equal(cmd.Process.Pid))
	g.Expect(found[0].Name()).To(Equal("sh"))
	_, err := procstop.Stop(cmd.Process, done, time.Minute)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(procstop.Mentioning(marker)).To(BeEmpty())
}
