package claims_test

import (
	"reflect"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	kurzv1alpha1 "github.com/kurz-dev/kurz/api/v1alpha1"
	"github.com/kurz-dev/kurz/internal/claims"
)

// cluster is the Domains of one hostname, by name, as kube-apiserver holds
// them; reconcile runs the controller's claim step on some of them.
type cluster map[string]*kurzv1alpha1.Domain

// reconcile reconciles names at once, at now: each pass reads the Domains
// as they were before any of them wrote (a cache where none has seen the
// others' writes), as the controller's workers do with a backlog.
func (c cluster) reconcile(now time.Time, names ...string) {
	snapshot := c.list()
	written := map[string]*kurzv1alpha1.Domain{}
	for _, n := range names {
		d := c[n].DeepCopy()
		if claims.Begin(d, snapshot, now) || claims.Review(d, snapshot, now) {
			written[n] = d
		}
	}
	for n, d := range written {
		c[n] = d
	}
}

// settle reconciles every Domain, one after the other, until a round
// changes nothing (the controller reconciles the Domains of a hostname
// again whenever one's claim changes), and fails if that takes more than
// three rounds.
func (c cluster) settle(t *testing.T, now time.Time) {
	t.Helper()
	for range 3 {
		before := c.claims()
		for _, n := range sortedNames(c) {
			c.reconcile(now, n)
		}
		if reflect.DeepEqual(before, c.claims()) {
			return
		}
	}
	t.Fatal("the claims did not settle in three rounds")
}

// claims returns every Domain's claim by name, for comparing.
func (c cluster) claims() map[string]*kurzv1alpha1.DomainClaim {
	out := map[string]*kurzv1alpha1.DomainClaim{}
	for n, d := range c {
		out[n] = d.Status.Claim.DeepCopy()
	}
	return out
}

func (c cluster) list() []kurzv1alpha1.Domain {
	out := make([]kurzv1alpha1.Domain, 0, len(c))
	for _, d := range c {
		out = append(out, *d.DeepCopy())
	}
	return out
}

// contested returns the names of the contested claims, sorted; it fails
// when a Domain has no claim.
func (c cluster) contested(g Gomega) []string {
	var out []string
	for _, n := range sortedNames(c) {
		g.Expect(c[n].Status.Claim).NotTo(BeNil(), n)
		if c[n].Status.Claim.Contested {
			out = append(out, n)
		}
	}
	return out
}

func (c cluster) owner() string {
	if o := claims.DomainOwner(c.list()); o != nil {
		return o.Name
	}
	return ""
}

func sortedNames(c cluster) []string {
	var names []string
	for n := range c {
		names = append(names, n)
	}
	for i := range names {
		for j := i + 1; j < len(names); j++ {
			if names[j] < names[i] {
				names[i], names[j] = names[j], names[i]
			}
		}
	}
	return names
}

// schedules returns every order in which names can be reconciled, as a
// sequence of steps, each step reconciling its names at once: one after
// the other in every order, all at once, and every mix.
func schedules(names []string) [][][]string {
	if len(names) == 0 {
		return [][][]string{nil}
	}
	var out [][][]string
	// The first step is any non-empty subset; the rest follows.
	for mask := 1; mask < 1<<len(names); mask++ {
		var first, rest []string
		for i, n := range names {
			if mask&(1<<i) != 0 {
				first = append(first, n)
			} else {
				rest = append(rest, n)
			}
		}
		for _, tail := range schedules(rest) {
			out = append(out, append([][]string{first}, tail...))
		}
	}
	return out
}

func describe(s [][]string) string {
	steps := make([]string, len(s))
	for i, step := range s {
		steps[i] = strings.Join(step, "+")
	}
	return strings.Join(steps, " then ")
}

// fresh is a Domain of ns just applied (generation 1, no status), created
// ago before t0.
func fresh(ns, name string, ago time.Duration) *kurzv1alpha1.Domain {
	d := domain(ns, name, ago)
	d.Generation = 1
	return &d
}

// TestContestEveryOrder: Domains of one hostname applied while no
// controller runs (a start, a leader handover, a bulk apply), then
// reconciled in every possible order, one after the other or at once. The
// claims always end the same: contested exactly when an older Domain of
// another workspace claims the hostname, so the oldest workspace owns it;
// and a later pass changes nothing.
func TestContestEveryOrder(t *testing.T) {
	tests := []struct {
		name      string
		domains   []*kurzv1alpha1.Domain
		contested []string
		owner     string
	}{
		{"two workspaces", []*kurzv1alpha1.Domain{fresh("a", "older", 10*time.Second), fresh("b", "younger", 5*time.Second)},
			[]string{"younger"}, "older"},
		// creationTimestamp has one-second resolution: the namespace
		// decides, so every pass agrees.
		{"two workspaces, same second", []*kurzv1alpha1.Domain{fresh("b", "nsb", 5*time.Second), fresh("a", "nsa", 5*time.Second)},
			[]string{"nsb"}, "nsa"},
		{"three workspaces", []*kurzv1alpha1.Domain{
			fresh("a", "first", 30*time.Second), fresh("b", "second", 20*time.Second), fresh("c", "third", 10*time.Second)},
			[]string{"second", "third"}, "first"},
		// The owner's workspace claims again after another workspace: not
		// contested (its workspace held the hostname).
		{"the youngest of the owner's workspace", []*kurzv1alpha1.Domain{
			fresh("a", "first", 30*time.Second), fresh("b", "second", 20*time.Second), fresh("a", "third", 10*time.Second)},
			[]string{"second"}, "first"},
		{"two of the owner's workspace first", []*kurzv1alpha1.Domain{
			fresh("a", "first", 30*time.Second), fresh("a", "second", 20*time.Second), fresh("b", "third", 10*time.Second)},
			[]string{"third"}, "first"},
	}
	for _, tt := range tests {
		var names []string
		for _, d := range tt.domains {
			names = append(names, d.Name)
		}
		for _, s := range schedules(names) {
			t.Run(tt.name+": "+describe(s), func(t *testing.T) {
				g := NewWithT(t)
				c := cluster{}
				for _, d := range tt.domains {
					c[d.Name] = d.DeepCopy()
				}
				now := t0
				for _, step := range s {
					now = now.Add(10 * time.Millisecond)
					c.reconcile(now, step...)
				}
				g.Expect(c.contested(g)).To(Equal(tt.contested))
				g.Expect(c.owner()).To(Equal(tt.owner))
				for _, d := range c {
					g.Expect(d.Status.Claim.Since.Time).To(Equal(d.CreationTimestamp.Time), "%s claims since its creation", d.Name)
					g.Expect(d.Status.Claim.DecidedAt).NotTo(BeNil())
				}

				settled := c.claims()
				for _, n := range names {
					c.reconcile(now.Add(time.Minute), n)
				}
				c.reconcile(now.Add(2*time.Minute), names...)
				g.Expect(c.claims()).To(Equal(settled), "a later pass changes nothing")
			})
		}
	}
	if n := len(schedules([]string{"a", "b", "c"})); n != 13 {
		t.Fatalf("three Domains have 13 orders, got %d", n)
	}
}

// TestSameSecondAsARecordedClaim: a Domain applied in the second another
// workspace's Domain was created, after that one's claim was recorded, is
// contested whatever its namespace; reconciled at once, the namespace
// decides.
func TestSameSecondAsARecordedClaim(t *testing.T) {
	g := NewWithT(t)
	c := cluster{"victim": fresh("v", "victim", time.Minute)}
	c.reconcile(t0, "victim")
	c["squat"] = fresh("a", "squat", time.Minute)
	c.reconcile(t0.Add(time.Second), "squat")
	c.settle(t, t0.Add(2*time.Second))
	g.Expect(c.contested(g)).To(Equal([]string{"squat"}))
	g.Expect(c.owner()).To(Equal("victim"))

	c = cluster{"victim": fresh("v", "victim", time.Minute), "other": fresh("a", "other", time.Minute)}
	c.reconcile(t0, "victim", "other")
	c.settle(t, t0.Add(time.Second))
	g.Expect(c.contested(g)).To(Equal([]string{"victim"}))
}

// TestConcurrentEditsSettle: two Domains edited to one hostname at once
// each begin before the other's claim is recorded, so neither sees the
// other; the next pass makes the later claim contested.
func TestConcurrentEditsSettle(t *testing.T) {
	g := NewWithT(t)
	a, b := fresh("a", "a", time.Hour), fresh("b", "b", time.Hour)
	a.Generation, b.Generation = 2, 2
	a.Status.Claim = &kurzv1alpha1.DomainClaim{Hostname: "old-a.test"}
	b.Status.Claim = &kurzv1alpha1.DomainClaim{Hostname: "old-b.test"}
	c := cluster{"a": a, "b": b}
	c.reconcile(t0, "a", "b")
	g.Expect(c.contested(g)).To(BeEmpty(), "neither saw the other's claim")
	// Both began at t0: the namespace breaks the tie, as everywhere.
	c.reconcile(t0.Add(time.Second), "a", "b")
	g.Expect(c.contested(g)).To(Equal([]string{"b"}))
	g.Expect(c.owner()).To(Equal("a"))
}

// old is a claim recorded by an earlier kurz (no decidedAt) on a Domain
// created ago before t0: since its creation, contested as given, decided
// at its first pass (judged before t0; Ready's lastTransitionTime, as
// createdAt is the creationTimestamp when that pass came late).
func old(ns, name string, ago time.Duration, contested bool, judged time.Duration) *kurzv1alpha1.Domain {
	d := fresh(ns, name, ago)
	created := metav1.NewMicroTime(d.CreationTimestamp.Time)
	d.Status.CreatedAt = &created
	d.Status.Claim = &kurzv1alpha1.DomainClaim{Hostname: "go.test", Since: created, Contested: contested}
	d.Status.Conditions = []metav1.Condition{{Type: kurzv1alpha1.ConditionReady, Status: metav1.ConditionFalse,
		Reason: kurzv1alpha1.ReasonDomainClaimed, LastTransitionTime: metav1.NewTime(t0.Add(-judged))}}
	return d
}

// TestReviewHealsWrongClaims: claims an earlier kurz recorded while behind
// (the older Domain reconciled first, while the younger one had no claim
// and counted as holding the hostname) are put right on upgrade, whichever
// Domain the new controller reaches first; and stay so.
func TestReviewHealsWrongClaims(t *testing.T) {
	for _, order := range [][]string{{"older", "younger"}, {"younger", "older"}, {"older+younger"}} {
		t.Run(strings.Join(order, " then "), func(t *testing.T) {
			g := NewWithT(t)
			// Both applied 60 and 50 s before t0, reconciled 40 s before.
			c := cluster{
				"older":   old("a", "older", time.Minute, true, 40*time.Second),
				"younger": old("b", "younger", 50*time.Second, false, 40*time.Second),
			}
			g.Expect(c.owner()).To(Equal("younger"), "the wrong owner, before the upgrade")
			for i, step := range order {
				c.reconcile(t0.Add(time.Duration(i)*time.Second), strings.Split(step, "+")...)
			}
			c.settle(t, t0.Add(10*time.Second))
			g.Expect(c.contested(g)).To(Equal([]string{"younger"}))
			g.Expect(c.owner()).To(Equal("older"))
			settled := c.claims()
			c.reconcile(t0.Add(time.Minute), "older", "younger")
			g.Expect(c.claims()).To(Equal(settled))
		})
	}

	t.Run("first pass within 2 s: createdAt says when", func(t *testing.T) {
		g := NewWithT(t)
		c := cluster{
			"older":   old("a", "older", time.Minute, true, 0),
			"younger": old("b", "younger", 50*time.Second, false, 0),
		}
		judged := metav1.NewMicroTime(c["older"].CreationTimestamp.Add(1500 * time.Millisecond))
		c["older"].Status.CreatedAt = &judged
		c.reconcile(t0, "older")
		g.Expect(c.contested(g)).To(Equal([]string{"older"}), "the younger Domain was created after the older one was decided")

		c = cluster{
			"older":   old("a", "older", time.Minute, true, 0),
			"younger": old("b", "younger", time.Minute-time.Second, false, 0),
		}
		judged = metav1.NewMicroTime(c["older"].CreationTimestamp.Add(1500 * time.Millisecond))
		c["older"].Status.CreatedAt = &judged
		// The younger Domain's creation (whole seconds) may be as late as
		// 1.999 s after the older one's: it may have come after.
		c.reconcile(t0, "older")
		g.Expect(c.contested(g)).To(Equal([]string{"older"}), "not surely there when it was decided")

		judged = metav1.NewMicroTime(c["older"].CreationTimestamp.Add(2 * time.Second))
		c["older"].Status.CreatedAt = &judged
		c["older"].Status.Claim.DecidedAt = nil
		c.reconcile(t0, "older", "younger")
		c.settle(t, t0.Add(time.Second))
		g.Expect(c.contested(g)).To(Equal([]string{"younger"}))
	})
}

// TestReviewKeepsSquattersContested: a claim contested because an older
// workspace held the hostname stays contested whatever happens to that
// workspace's Domain: there, deleted, or replaced by a new one; recorded by
// an earlier kurz or by this one.
func TestReviewKeepsSquattersContested(t *testing.T) {
	tests := []struct {
		name    string
		domains []*kurzv1alpha1.Domain
	}{
		{"the victim is there", []*kurzv1alpha1.Domain{
			old("victim", "v", time.Hour, false, time.Hour), old("squat", "s", time.Minute, true, 50*time.Second)}},
		{"the victim left", []*kurzv1alpha1.Domain{old("squat", "s", time.Minute, true, 50*time.Second)}},
		{"the victim came back", []*kurzv1alpha1.Domain{
			old("squat", "s", time.Minute, true, 50*time.Second), old("victim", "v2", 10*time.Second, false, 10*time.Second)}},
		// Another squatter, reconciled first by the earlier kurz: contested
		// too, so it witnesses nothing.
		{"the victim left two squatters", []*kurzv1alpha1.Domain{
			old("squat", "s", time.Minute, true, 40*time.Second), old("squat2", "s2", 50*time.Second, true, 45*time.Second)}},
		// Decided by this rule: kept, whatever a younger claim suggests.
		{"decided by this rule", []*kurzv1alpha1.Domain{
			decided(old("squat", "s", time.Minute, true, 40*time.Second)), old("victim", "v2", 50*time.Second, false, 40*time.Second)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			c := cluster{}
			for _, d := range tt.domains {
				c[d.Name] = d
			}
			for range 2 {
				c.reconcile(t0, sortedNames(c)...)
				c.reconcile(t0.Add(time.Second), "s")
			}
			g.Expect(c["s"].Status.Claim.Contested).To(BeTrue())
			g.Expect(c["s"].Status.Claim.DecidedAt).NotTo(BeNil(), "kept for good from now on")
			g.Expect(c.owner()).NotTo(Equal("s"))
		})
	}
}

func decided(d *kurzv1alpha1.Domain) *kurzv1alpha1.Domain {
	at := metav1.NewMicroTime(t0.Add(-time.Hour))
	d.Status.Claim.DecidedAt = &at
	return d
}

// TestReviewTXTProofSeenNowIsNoHolder: an uncontested claim does not turn
// contested for an older contested claim proven by TXT now; the proof may
// have come after it began.
func TestReviewTXTProofSeenNowIsNoHolder(t *testing.T) {
	g := NewWithT(t)
	buyer := decided(old("buyer", "b", time.Hour, true, time.Hour))
	buyer.Status.Claim.Proof = kurzv1alpha1.ProofTXT
	c := cluster{"b": buyer, "v": decided(old("victim", "v", time.Minute, false, time.Minute))}
	c.reconcile(t0, "v", "b")
	g.Expect(c.contested(g)).To(Equal([]string{"b"}))
	g.Expect(c.owner()).To(Equal("b"), "TXT proof outranks")
}
