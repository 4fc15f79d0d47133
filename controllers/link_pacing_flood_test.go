package controllers_test

import (
	"fmt"
	"testing"

	. "github.com/onsi/gomega"
	"github.com/prometheus/client_golang/prometheus/testutil"

	kurzv1alpha1 "github.com/kurz-dev/kurz/api/v1alpha1"
	"github.com/kurz-dev/kurz/controllers"
	"github.com/kurz-dev/kurz/internal/testenv"
)

// TestFirstListWaitsForRoomInTheQueue: Links created while no leader ran
// reach a new leader's work queue as it empties. The informer's first
// list hands the controller all 40 before its workers start, so with
// room for 3 in the queue 37 wait for the feeder; every one becomes
// Active, and then none is counted as waiting.
func TestFirstListWaitsForRoomInTheQueue(t *testing.T) {
	testenv.Need(t)
	g := NewWithT(t)
	ns := newNamespace(t, "paced")
	h := host(t, "paced.test")
	// The Domain too, so that no Domain event reconciles the Links: only
	// their Creates do.
	g.Expect(k8sClient.Create(ctx, newDomain(ns, "paced", h))).To(Succeed())
	var links []*kurzv1alpha1.Link
	for i := range 40 {
		l := newLink(ns, fmt.Sprintf("l%d", i), h, fmt.Sprintf("k%d", i))
		g.Expect(k8sClient.Create(ctx, l)).To(Succeed())
		links = append(links, l)
	}
	waiting := testutil.ToFloat64(controllers.LinksWaiting)

	restore := controllers.SetPacedBound(3)
	start(t, newManager(t, cfg, testOptions(newDNS(t)), nil))
	restore()
	for _, l := range links {
		g.Eventually(readyOf(l), timeout, poll).Should(Equal(linkActive), l.Name)
	}
	g.Eventually(func() float64 { return testutil.ToFloat64(controllers.LinksWaiting) }, timeout, poll).Should(Equal(waiting))
}
