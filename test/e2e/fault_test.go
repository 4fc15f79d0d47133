package e2e

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/go-logr/logr"
	coordinationv1 "k8s.io/api/coordination/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	. "github.com/onsi/gomega"

	kurzv1alpha1 "github.com/kurz-dev/kurz/api/v1alpha1"
	"github.com/kurz-dev/kurz/internal/manager"
	"github.com/kurz-dev/kurz/internal/testenv"
)

const (
	faultHost = "fault.e2e.example"
	// freezeFor outlasts the Lease twice over: every replica must have
	// given up leading before the control plane returns.
	freezeFor = 2 * leaseDuration
	leaseName = "kurz-controllers.kurz.dev"
	// settleTimeout bounds how long clicks may take to reach the Links
	// once the control plane is back.
	settleTimeout = 90 * time.Second
)

// faultRig is a Deployment of two kurz replicas with leader election on a
// kurz dev control plane whose own roles are off, so the replicas are the
// only controllers and the only click writers.
type faultRig struct {
	dev       *kurzDev
	apiServer int // kube-apiserver's pid, for SIGSTOP/SIGCONT
	c         client.Client
	replicas  [2]*replica
	// shared keys are clicked at both replicas; own[i] only at replica i,
	// so that what a killed replica lost can be told apart.
	shared []string
	own    [2][]string
	// sent is every click on shared keys answered so far, all scenarios.
	sent int64
}

// TestFaultTolerance breaks the control plane and the replicas while
// visitors click at both replicas the whole time: kube-apiserver frozen for
// longer than the Lease, a replica stopped during a freeze and started
// again, a rolling restart behind readiness-following endpoints, the leader
// killed.
func TestFaultTolerance(t *testing.T) {
	f := newFaultRig(t)
	// Each scenario starts from where the previous one left the replicas:
	// after a failure the rest would only report its consequences.
	_ = t.Run("APIServerFrozen", f.apiServerFrozen) &&
		t.Run("SIGTERMDuringFreeze", f.sigtermDuringFreeze) &&
		t.Run("RollingRestart", f.rollingRestart) &&
		t.Run("LeaderKilled", f.leaderKilled)
}

func newFaultRig(t *testing.T) *faultRig {
	g := NewWithT(t)
	dir := t.TempDir()
	f := &faultRig{
		shared: []string{"s0", "s1", "s2", "s3"},
		own:    [2][]string{{"r0-a", "r0-b"}, {"r1-a", "r1-b"}},
	}
	// kurz dev brings the control plane; its own controllers and redirect
	// server are off (its API stays: it is how startKurzDev knows it is up).
	f.dev = startKurzDev(t, filepath.Join(dir, "dev"), testenv.FreeAddr(t), testenv.FreeAddr(t), "--controllers=false", "--redirect=false")
	t.Cleanup(func() {
		for _, r := range f.replicas {
			if r != nil {
				r.kill()
			}
		}
		if f.apiServer != 0 {
			_ = syscall.Kill(f.apiServer, syscall.SIGCONT) // a failed test must not leave it frozen
		}
		if err := f.dev.stop(t, syscall.SIGTERM); err != nil {
			t.Logf("kurz dev: %v; log:\n%s", err, f.dev.log)
		}
	})
	var err error
	f.apiServer, err = childProcess(f.dev.cmd.Process.Pid, "kube-apiserver")
	g.Expect(err).NotTo(HaveOccurred())

	ctrllog.SetLogger(logr.Discard()) // the test's client logs nothing worth reading
	kubeconfig := filepath.Join(f.dev.dataDir, "kubeconfig")
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	g.Expect(err).NotTo(HaveOccurred())
	cfg.Timeout = 10 * time.Second
	f.c, err = client.New(cfg, client.Options{Scheme: manager.Scheme})
	g.Expect(err).NotTo(HaveOccurred())

	ctx := context.Background()
	g.Expect(f.c.Create(ctx, &kurzv1alpha1.Domain{
		ObjectMeta: metav1.ObjectMeta{Name: "fault", Namespace: "default"},
		Spec:       kurzv1alpha1.DomainSpec{Domain: faultHost},
	})).To(Succeed())
	keys := append(append(append([]string(nil), f.shared...), f.own[0]...), f.own[1]...)
	for _, key := range keys {
		f.createLink(t, key)
	}

	for i := range f.replicas {
		f.replicas[i] = newReplica(t, fmt.Sprintf("replica-%d", i), kubeconfig, dir)
		f.replicas[i].start(t)
	}
	for _, r := range f.replicas {
		f.waitServing(t, r, keys...)
	}
	for _, key := range keys {
		f.waitReady(t, key)
	}
	f.leader(t)
	return f
}

// apiServerFrozen: kube-apiserver stopped for twice the Lease. Both replicas
// answer every redirect, neither exits, and once it is back every click is
// counted exactly once and the controllers work again.
func (f *faultRig) apiServerFrozen(t *testing.T) {
	g := NewWithT(t)
	f.expectCounted(t, f.shared, f.sent)
	var traffic [2]*clickTraffic
	for i, r := range f.replicas {
		traffic[i] = startClicks(r.redirect, faultHost, f.shared)
		defer traffic[i].stop()
	}
	time.Sleep(2 * time.Second) // clicks flowing and flushed before the freeze

	frozeAt := f.freeze(t)
	time.Sleep(freezeFor)
	for _, r := range f.replicas {
		f.expectAlive(t, r)
		leads, err := r.leads()
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(leads).To(BeFalse(), "%s still leads %v into a freeze with a %v renew deadline", r.name, freezeFor, renewDeadline)
	}
	thawedAt := f.thaw(t)
	time.Sleep(3 * time.Second) // and clicks flowing after
	for i, r := range f.replicas {
		traffic[i].stop()
		g.Expect(traffic[i].failedCount()).To(BeZero(), "%s: %v", r.name, traffic[i])
		f.expectAlive(t, r)
		t.Logf("FIGURE freeze %s: %v; %d during the %v freeze", r.name, traffic[i], traffic[i].sentIn(frozeAt, thawedAt), freezeFor)
		f.sent += traffic[i].sent()
	}
	f.expectCounted(t, f.shared, f.sent)
	t.Logf("FIGURE freeze: %d clicks sent, all counted %v after the thaw", f.sent, time.Since(thawedAt).Round(100*time.Millisecond))

	// A Link applied now is reconciled: some replica leads again.
	f.createLink(t, "after-freeze")
	f.waitReady(t, "after-freeze")
	t.Logf("FIGURE freeze: a Link created after the thaw Ready %v after the thaw", time.Since(thawedAt).Round(100*time.Millisecond))
	f.leader(t)
}

// sigtermDuringFreeze: replica 1 is clicked only during a freeze, so none
// of its clicks can reach the Links before it is stopped (SIGTERM, still
// frozen); they are counted once it starts again on the same spool file.
func (f *faultRig) sigtermDuringFreeze(t *testing.T) {
	g := NewWithT(t)
	a, b := f.replicas[0], f.replicas[1]
	f.expectCounted(t, f.shared, f.sent)
	ta := startClicks(a.redirect, faultHost, f.shared)
	defer ta.stop()
	time.Sleep(2 * time.Second)

	frozeAt := f.freeze(t)
	tb := startClicks(b.redirect, faultHost, f.shared)
	time.Sleep(3 * time.Second)
	tb.stop()
	stoppedAt := time.Now()
	err := b.stop(t, syscall.SIGTERM, 2*time.Minute)
	t.Logf("FIGURE sigterm: %s exited %v after SIGTERM (%v); log tail:\n%s", b.name, time.Since(stoppedAt).Round(100*time.Millisecond), err, b.log.Tail(15))
	g.Expect(err).NotTo(HaveOccurred(), "%s exits 0 on SIGTERM; log:\n%s", b.name, b.log.Tail(60))
	g.Expect(tb.failedCount()).To(BeZero(), "%s: %v", b.name, tb)
	spool, err := os.Stat(b.spool)
	g.Expect(err).NotTo(HaveOccurred(), "%s spooled its %d unwritten clicks", b.name, tb.sent())
	g.Expect(spool.Size()).To(BeNumerically(">", 0))

	if rest := freezeFor - time.Since(frozeAt); rest > 0 {
		time.Sleep(rest)
	}
	thawedAt := f.thaw(t)
	time.Sleep(2 * time.Second)
	ta.stop()
	g.Expect(ta.failedCount()).To(BeZero(), "%s: %v", a.name, ta)
	f.expectAlive(t, a)
	f.sent += ta.sent() + tb.sent()

	// Without b, everything but b's clicks gets counted.
	var without int64
	g.Eventually(func() (int64, error) {
		var err error
		without, err = f.counted(f.shared)
		return without, err
	}).WithTimeout(settleTimeout).Should(BeNumerically(">=", f.sent-tb.sent()))
	g.Expect(without).To(BeNumerically("<=", f.sent), "never more than sent")

	restartAt := time.Now()
	b.start(t)
	f.waitServing(t, b, f.shared...)
	f.expectCounted(t, f.shared, f.sent)
	t.Logf("FIGURE sigterm: %s sent %d clicks during the freeze (%s; a: %v); %d counted before it started again, exact (%d) %v after its restart (%v after the thaw)",
		b.name, tb.sent(), tb, ta, without, f.sent, time.Since(restartAt).Round(100*time.Millisecond), time.Since(thawedAt).Round(100*time.Millisecond))

	// The spool is replayed once: another restart, and clicks after it,
	// add only those clicks.
	g.Expect(b.stop(t, syscall.SIGTERM, time.Minute)).To(Succeed(), "%s exits 0 on SIGTERM; log:\n%s", b.name, b.log.Tail(60))
	b.start(t)
	f.waitServing(t, b, f.shared...)
	again := startClicks(b.redirect, faultHost, f.shared)
	defer again.stop()
	time.Sleep(time.Second)
	again.stop()
	g.Expect(again.failedCount()).To(BeZero(), "%s: %v", b.name, again)
	f.sent += again.sent()
	f.expectCounted(t, f.shared, f.sent)
}

// rollingRestart restarts the replicas one at a time, as a Deployment
// rollout does, while visitors reach them through endpoints that follow
// /readyz: no click fails, every click is counted, and a replica leads
// afterwards.
func (f *faultRig) rollingRestart(t *testing.T) {
	g := NewWithT(t)
	f.expectCounted(t, f.shared, f.sent)
	e := watchEndpoints(f.replicas[:]...)
	defer e.stop()
	traffic := startClicksVia(e.pick, faultHost, f.shared)
	defer traffic.stop()
	time.Sleep(2 * time.Second)

	began := time.Now()
	for i, r := range f.replicas {
		g.Expect(r.stop(t, syscall.SIGTERM, time.Minute)).To(Succeed(), "%s exits 0 on SIGTERM; log:\n%s", r.name, r.log.Tail(60))
		r.start(t)
		f.waitServing(t, r, f.shared...)
		g.Eventually(e.ready[i].Load).WithTimeout(time.Minute).Should(BeTrue(), "%s back in the endpoints", r.name)
	}
	took := time.Since(began)
	time.Sleep(2 * time.Second)
	traffic.stop()
	g.Expect(traffic.failedCount()).To(BeZero(), "clicks through the endpoints: %v", traffic)
	f.sent += traffic.sent()
	f.expectCounted(t, f.shared, f.sent)
	t.Logf("FIGURE rollout: both replicas restarted in %v (shutdown delay %v, probe every %v); %v through the endpoints; all counted",
		took.Round(100*time.Millisecond), shutdownDelay, probePeriod, traffic)

	f.leader(t)
	f.createLink(t, "after-rollout")
	f.waitReady(t, "after-rollout")
}

// leaderKilled: the leader is SIGKILLed while clicked. The other replica
// takes over the controllers once the Lease expires, and the killed one
// loses at most the clicks of its last flush interval.
func (f *faultRig) leaderKilled(t *testing.T) {
	g := NewWithT(t)
	li := f.leader(t)
	l, s := f.replicas[li], f.replicas[1-li]
	var before coordinationv1.Lease
	g.Expect(f.c.Get(context.Background(), client.ObjectKey{Namespace: "default", Name: leaseName}, &before)).To(Succeed())
	g.Expect(before.Spec.HolderIdentity).NotTo(BeNil())

	tl := startClicks(l.redirect, faultHost, f.own[li])
	ts := startClicks(s.redirect, faultHost, f.own[1-li])
	defer tl.stop()
	defer ts.stop()
	time.Sleep(4 * time.Second)

	killedAt := time.Now()
	g.Expect(l.cmd.Process.Kill()).To(Succeed())
	<-l.done
	tl.stop()
	// What it answered in its last flush interval: its last flush took its
	// counts then, or a scheduling delay after the tick (the tenth allows
	// for that); answers that came back after the kill are included.
	lastInterval := tl.sentIn(killedAt.Add(-flushInterval-flushInterval/10), time.Now())
	rate := float64(tl.sentIn(time.Time{}, killedAt)) / killedAt.Sub(tl.started).Seconds()

	f.createLink(t, "after-kill")
	g.Eventually(func() (bool, error) { return s.leads() }).WithTimeout(time.Minute).WithPolling(100*time.Millisecond).Should(BeTrue(), "%s takes over; log:\n%s", s.name, s.log.Tail(40))
	leadsAfter := time.Since(killedAt)
	f.waitReady(t, "after-kill")
	readyAfter := time.Since(killedAt)
	var after coordinationv1.Lease
	g.Expect(f.c.Get(context.Background(), client.ObjectKey{Namespace: "default", Name: leaseName}, &after)).To(Succeed())
	g.Expect(after.Spec.HolderIdentity).NotTo(BeNil())
	g.Expect(*after.Spec.HolderIdentity).NotTo(Equal(*before.Spec.HolderIdentity), "the Lease changed hands")
	g.Expect(s.log.String()).To(ContainSubstring(*after.Spec.HolderIdentity), "the Lease names %s (it logs its identity)", s.name)
	t.Logf("FIGURE kill: %s (%s) killed; %s (%s) leads %v later, a Link created after the kill Ready %v later (lease %v)",
		l.name, *before.Spec.HolderIdentity, s.name, *after.Spec.HolderIdentity, leadsAfter.Round(100*time.Millisecond), readyAfter.Round(100*time.Millisecond), leaseDuration)

	ts.stop()
	g.Expect(ts.failedCount()).To(BeZero(), "%s: %v", s.name, ts)
	f.expectCounted(t, f.own[1-li], ts.sent())
	// The killed replica's Links only change through its own writes, which
	// were all sent before s's clicks were counted.
	g.Eventually(f.counted).WithArguments(f.own[li]).WithTimeout(settleTimeout).Should(BeNumerically(">=", tl.sent()-lastInterval))
	counted, err := f.counted(f.own[li])
	g.Expect(err).NotTo(HaveOccurred())
	lost := tl.sent() - counted
	t.Logf("FIGURE kill: %s was sent %d clicks (%.0f/s, %d in its last %v, %d after the kill), %d counted: %d lost",
		l.name, tl.sent(), rate, lastInterval, flushInterval+flushInterval/10, tl.sentIn(killedAt, time.Now()), counted, lost)
	g.Expect(lost).To(BeNumerically(">=", 0), "never more than sent")
	g.Expect(lost).To(BeNumerically("<=", lastInterval), "at most one flush interval of clicks is lost")
}

// freeze stops kube-apiserver (SIGSTOP): it holds every connection and
// answers nothing, as a hung control plane does. It is thawed at the latest
// when t ends.
func (f *faultRig) freeze(t *testing.T) time.Time {
	t.Helper()
	t.Cleanup(func() { _ = syscall.Kill(f.apiServer, syscall.SIGCONT) })
	NewWithT(t).Expect(syscall.Kill(f.apiServer, syscall.SIGSTOP)).To(Succeed())
	NewWithT(t).Eventually(func() (string, error) {
		_, _, state, err := procStat(f.apiServer)
		return state, err
	}).WithTimeout(10 * time.Second).WithPolling(10 * time.Millisecond).Should(Equal("T"))
	return time.Now()
}

func (f *faultRig) thaw(t *testing.T) time.Time {
	t.Helper()
	NewWithT(t).Expect(syscall.Kill(f.apiServer, syscall.SIGCONT)).To(Succeed())
	return time.Now()
}

// leader waits until exactly one replica leads and returns it.
func (f *faultRig) leader(t *testing.T) int {
	t.Helper()
	leader := -1
	NewWithT(t).Eventually(func(g Gomega) {
		leader = -1
		for i, r := range f.replicas {
			leads, err := r.leads()
			g.Expect(err).NotTo(HaveOccurred())
			if leads {
				g.Expect(leader).To(Equal(-1), "%s and %s both lead", f.replicas[0].name, f.replicas[1].name)
				leader = i
			}
		}
		g.Expect(leader).NotTo(Equal(-1), "one replica leads")
	}).WithTimeout(time.Minute).WithPolling(200 * time.Millisecond).Should(Succeed())
	return leader
}

func (f *faultRig) createLink(t *testing.T, key string) {
	t.Helper()
	NewWithT(t).Expect(f.c.Create(context.Background(), &kurzv1alpha1.Link{
		ObjectMeta: metav1.ObjectMeta{Name: key, Namespace: "default"},
		Spec:       kurzv1alpha1.LinkSpec{Domain: faultHost, Key: key, URL: kurzv1alpha1.URL("https://example.com/" + key)},
	})).To(Succeed())
}

// waitReady waits for the controllers to mark the Link Ready.
func (f *faultRig) waitReady(t *testing.T, name string) {
	t.Helper()
	NewWithT(t).Eventually(func(g Gomega) {
		var l kurzv1alpha1.Link
		g.Expect(f.c.Get(context.Background(), client.ObjectKey{Namespace: "default", Name: name}, &l)).To(Succeed())
		g.Expect(apimeta.IsStatusConditionTrue(l.Status.Conditions, kurzv1alpha1.ConditionReady)).To(BeTrue(), "%v", l.Status.Conditions)
	}).WithTimeout(time.Minute).WithPolling(100*time.Millisecond).Should(Succeed(), "Link %s Ready", name)
}

// waitServing waits until r is ready and redirects every key; HEAD, so that
// no click is counted.
func (f *faultRig) waitServing(t *testing.T, r *replica, keys ...string) {
	t.Helper()
	NewWithT(t).Eventually(func(g Gomega) {
		f.expectAlive(t, r)
		g.Expect(r.ready()).To(Succeed())
		for _, key := range keys {
			req, err := http.NewRequest(http.MethodHead, "http://"+r.redirect+"/"+key, nil)
			g.Expect(err).NotTo(HaveOccurred())
			req.Host = faultHost
			resp, err := noRedirects.Do(req)
			g.Expect(err).NotTo(HaveOccurred())
			resp.Body.Close()
			g.Expect(resp.StatusCode).To(Equal(http.StatusFound), key)
		}
	}).WithTimeout(2*time.Minute).WithPolling(200*time.Millisecond).Should(Succeed(), "%s serves; log:\n%s", r.name, r.log.Tail(40))
}

// expectAlive fails the test at once if r has exited.
func (f *faultRig) expectAlive(t *testing.T, r *replica) {
	t.Helper()
	if done, err := r.exited(); done {
		t.Fatalf("%s exited (%v); log:\n%s", r.name, err, r.log.Tail(60))
	}
}

// counted sums status.clicks over the Links of keys.
func (f *faultRig) counted(keys []string) (int64, error) {
	var sum int64
	for _, key := range keys {
		var l kurzv1alpha1.Link
		if err := f.c.Get(context.Background(), client.ObjectKey{Namespace: "default", Name: key}, &l); err != nil {
			return 0, err
		}
		sum += l.Status.Clicks
	}
	return sum, nil
}

// expectCounted waits until the Links of keys count exactly want clicks.
func (f *faultRig) expectCounted(t *testing.T, keys []string, want int64) {
	t.Helper()
	NewWithT(t).Eventually(f.counted).WithArguments(keys).WithTimeout(settleTimeout).WithPolling(250*time.Millisecond).Should(Equal(want), func() string {
		return fmt.Sprintf("clicks counted on %v; logs:\n%s\n%s", keys, f.replicas[0].log.Tail(30), f.replicas[1].log.Tail(30))
	})
}
