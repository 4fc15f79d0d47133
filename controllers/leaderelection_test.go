package controllers_test

import (
	"testing"
	"time"

	. "github.com/onsi/gomega"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/kurz-dev/kurz/internal/testenv"
)

func isElected(mgr ctrl.Manager) bool {
	select {
	case <-mgr.Elected():
		return true
	default:
		return false
	}
}

// TestLeaderElection runs two managers: one leads, and when it stops
// without releasing its Lease (a crash), the other takes over.
func TestLeaderElection(t *testing.T) {
	testenv.Need(t)
	g := NewWithT(t)
	srv := newDNS(t)
	ns := newNamespace(t, "le")
	leaseDuration, renewDeadline, retryPeriod := 3*time.Second, 2*time.Second, 500*time.Millisecond
	elect := func(o *ctrl.Options) {
		o.LeaderElection = true
		o.LeaderElectionID = "kurz-controllers-test"
		o.LeaderElectionNamespace = ns
		o.LeaseDuration = &leaseDuration
		o.RenewDeadline = &renewDeadline
		o.RetryPeriod = &retryPeriod
		o.LeaderElectionReleaseOnCancel = false
	}
	a := newManager(t, cfg, testOptions(srv), elect)
	b := newManager(t, cfg, testOptions(srv), elect)
	stops := map[ctrl.Manager]func(){a: start(t, a), b: start(t, b)}

	g.Eventually(func() bool { return isElected(a) || isElected(b) }, timeout, poll).Should(BeTrue())
	leader, standby := a, b
	if !isElected(a) {
		leader, standby = b, a
	}
	g.Expect(isElected(standby)).To(BeFalse(), "one leader at a time")

	g.Expect(k8sClient.Create(ctx, newDomain(ns, "go", host(t, "go.le.test")))).To(Succeed())
	first := newLink(ns, "first", host(t, "go.le.test"), "a")
	createReady(g, first, linkActive)

	stops[leader]()
	g.Eventually(func() bool { return isElected(standby) }, 20*time.Second, poll).Should(BeTrue(),
		"the standby takes over within 20s")
	second := newLink(ns, "second", host(t, "go.le.test"), "b")
	createReady(g, second, linkActive)
}
