package claims

import (
	"slices"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	kurzv1alpha1 "github.com/kurz-dev/kurz/api/v1alpha1"
)

// The contest rule: a claim is contested when, at the moment it began, a
// Domain of another workspace held the hostname, that is when the owner
// (Owner) of the claims that began before it is of another workspace.
// Whether a claim is contested is decided from facts every reconcile sees
// alike (when each claim began, creation times, names), never from the
// order in which a backlogged controller reaches the Domains: a Domain not
// reconciled yet and never edited has claimed its hostname since its
// creation and counts from there (Claim.Since). Two Domains reconciled one
// after the other, or at once from a cache where neither has a claim yet,
// get the same answer: the older one uncontested, the younger contested.

// Begin records status.claim when d has no current claim, and reports
// whether it did (the write must take the optimistic lock). claimants are
// the Domains of every namespace with d's hostname (d among them or not).
// The claim starts now, as the hostname was just set or changed; except for
// a Domain never claimed and never edited (generation 1), which has claimed
// its hostname since its creation. It is contested when the claims that
// began before it (Domains not reconciled yet counted from their creation)
// are held by another workspace: then only TXT proof can make it the
// owner, for as long as the claim lasts.
func Begin(d *kurzv1alpha1.Domain, claimants []kurzv1alpha1.Domain, now time.Time) bool {
	if _, ok := ClaimSince(d); ok {
		return false
	}
	now = now.Truncate(time.Microsecond)
	self := contestantOf(d)
	if !self.begun() {
		self.Since = now
	}
	cs, i := contestants(self, d, claimants)
	d.Status.Claim = &kurzv1alpha1.DomainClaim{
		Hostname:  string(d.Spec.Domain),
		Since:     metav1.NewMicroTime(self.Since),
		Contested: decide(cs)[i],
		DecidedAt: ptr.To(metav1.NewMicroTime(now)),
	}
	return true
}

// Review decides again whether d's current claim is contested, and reports
// whether that changed status.claim (the write must take the optimistic
// lock). A contested flag decided by this rule is kept for good: the
// workspace that held the hostname may be gone since, and a squatter must
// not inherit it. What Review changes:
//
//   - A claim turns contested when an uncontested claim of another
//     workspace began before it and is still there: two Domains edited to
//     one hostname at once each began before the other had recorded its
//     claim, and a Domain healed below makes the younger claims contested.
//   - A claim recorded by an earlier kurz (no decidedAt) that is contested
//     although no earlier claim of another workspace holds the hostname is
//     healed, when the claim that made it contested is still there: a
//     younger claim of another workspace, uncontested, begun before the
//     contested claim was first decided (that kurz counted a Domain not
//     reconciled yet as holding the hostname, whatever its age). Without
//     such a witness it stays contested: nothing tells it from a squatter
//     whose victim left. It is then marked decided, and kept.
func Review(d *kurzv1alpha1.Domain, claimants []kurzv1alpha1.Domain, now time.Time) bool {
	cl := d.Status.Claim
	if _, ok := ClaimSince(d); !ok {
		return false
	}
	cs, i := contestants(contestantOf(d), d, claimants)
	contested := decide(cs)[i]
	if contested == cl.Contested && cl.DecidedAt != nil {
		return false
	}
	cl.Contested = contested
	cl.DecidedAt = ptr.To(metav1.NewMicroTime(now.Truncate(time.Microsecond)))
	return true
}

// contestant is one Domain of a hostname as the contest rule sees it.
type contestant struct {
	Claim
	// decided: the claim's contested flag was decided by this rule
	// (status.claim.decidedAt), so a contested one is kept for good.
	decided bool
	// judged is, for a claim recorded by an earlier kurz, a time by which
	// that kurz had decided its contested flag; zero when unknown.
	judged time.Time
}

func contestantOf(d *kurzv1alpha1.Domain) contestant {
	c := contestant{Claim: ClaimOf(d)}
	if c.Current {
		c.decided = d.Status.Claim.DecidedAt != nil
		c.judged = judgedBy(d)
	}
	return c
}

// judgedBy returns when an earlier kurz decided d's contested flag:
// status.createdAt, stamped by the pass that recorded the claim (or
// earlier), unless it merely copies the creationTimestamp (that pass came
// more than 2 s late); then the Ready condition's lastTransitionTime, set
// by that pass and kept since, as a claim contested without TXT proof is
// never Ready.
func judgedBy(d *kurzv1alpha1.Domain) time.Time {
	if c := d.Status.CreatedAt; c != nil && !c.Time.Equal(d.CreationTimestamp.Time) {
		return c.Time
	}
	if r := meta.FindStatusCondition(d.Status.Conditions, kurzv1alpha1.ConditionReady); r != nil {
		return r.LastTransitionTime.Time
	}
	return time.Time{}
}

// contestants returns the contest's facts for self (the Domain d as this
// pass sees it) and the other claimants of d's hostname, and self's index.
func contestants(self contestant, d *kurzv1alpha1.Domain, claimants []kurzv1alpha1.Domain) ([]contestant, int) {
	cs := make([]contestant, 0, len(claimants)+1)
	for i := range claimants {
		o := &claimants[i]
		if (o.Namespace != d.Namespace || o.Name != d.Name) && o.Spec.Domain == d.Spec.Domain {
			cs = append(cs, contestantOf(o))
		}
	}
	return append(cs, self), len(cs)
}

// decide returns whether each claim of cs is contested, deciding them in
// the order they began, each against the claims before it as decided.
// Claims that have not begun (edited Domains not reconciled yet) keep what
// they have: they begin after every other.
func decide(cs []contestant) []bool {
	order := make([]int, 0, len(cs))
	contested := make([]bool, len(cs))
	for i := range cs {
		contested[i] = cs[i].Contested
		if cs[i].begun() {
			order = append(order, i)
		}
	}
	slices.SortFunc(order, func(a, b int) int {
		if begunBefore(cs[a].Claim, cs[b].Claim) {
			return -1
		}
		return 1
	})
	// earlier: the claims decided so far, as decided; surely: those that
	// are also uncontested as recorded.
	earlier := make([]Claim, 0, len(order))
	surely := make([]bool, 0, len(order))
	for _, i := range order {
		contested[i] = cs[i].contested(earlier, surely, cs)
		c := cs[i].Claim
		c.Contested = contested[i]
		earlier = append(earlier, c)
		surely = append(surely, !c.Contested && !cs[i].Contested)
	}
	return contested
}

// contested decides c against earlier, the claims that began before it
// (as decided; surely[i]: uncontested as recorded too); all are the other
// claims of the hostname.
func (c contestant) contested(earlier []Claim, surely []bool, all []contestant) bool {
	switch {
	case !c.Current:
		return heldElsewhere(earlier, c.Namespace)
	case c.Contested && c.decided:
		return true
	case c.Contested:
		return heldElsewhere(earlier, c.Namespace) || !c.witnessed(all)
	}
	// Recorded uncontested: turns contested only for a claim that surely
	// held the hostname when c began, uncontested then as now: a TXT proof
	// seen now may have come later, and a claim healing is taken once its
	// Domain has recorded it (which wakes c's), as until then c's claim
	// is its witness.
	held := make([]Claim, 0, len(earlier))
	for i, e := range earlier {
		if e.Namespace == c.Namespace || surely[i] {
			held = append(held, e)
		}
	}
	return heldElsewhere(held, c.Namespace)
}

// heldElsewhere reports whether the owner of claims is of another
// namespace than ns.
func heldElsewhere(claims []Claim, ns string) bool {
	i := Owner(claims)
	return i >= 0 && claims[i].Namespace != ns
}

// witnessed reports whether the claim that made c contested when an
// earlier kurz decided it may well be a younger one, still there: a claim
// of another workspace, not contested, that began after c but surely
// before c was decided (one second of margin: creation times are whole
// seconds).
func (c contestant) witnessed(all []contestant) bool {
	if c.judged.IsZero() {
		return false
	}
	for _, o := range all {
		if o.Namespace == c.Namespace || o.Deleting || o.Contested || !o.begun() {
			continue
		}
		if begunBefore(c.Claim, o.Claim) && !o.Since.Add(time.Second).After(c.judged) {
			return true
		}
	}
	return false
}
