package devenv

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	. "github.com/onsi/gomega"
)

func TestWatchReportsAControlPlaneProcessThatDies(t *testing.T) {
	g := NewWithT(t)
	dir := t.TempDir()
	sleeper := func(name string) *child {
		c, err := startChild(name, "/bin/sleep", []string{"600"}, nil, filepath.Join(dir, name+".log"))
		g.Expect(err).NotTo(HaveOccurred())
		t.Cleanup(func() { _ = c.stop(time.Second) })
		return c
	}
	e := &Env{etcd: sleeper("etcd"), apiSrv: sleeper("kube-apiserver")}

	// A cancelled context is a clean end.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	g.Expect(e.Watch(ctx)).To(Succeed())

	errc := make(chan error, 1)
	go func() { errc <- e.Watch(context.Background()) }()
	g.Consistently(errc, 200*time.Millisecond).ShouldNot(Receive(), "nothing died yet")
	g.Expect(e.etcd.cmd.Process.Kill()).To(Succeed())
	var err error
	g.Eventually(errc, 10*time.Second).Should(Receive(&err))
	g.Expect(err).To(MatchError(ContainSubstring("etcd exited")))
}
