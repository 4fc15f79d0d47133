package claims

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	kurzv1alpha1 "github.com/kurz-dev/kurz/api/v1alpha1"
)

// Older reports whether a was created before b. Ties (creationTimestamp has
// one-second resolution) break on namespace, then name, so every replica
// reaches the same answer.
func Older(a, b metav1.Object) bool { return KeyClaimOf(a).older(KeyClaimOf(b)) }

// Claim is what the ownership rules look at for one Domain, so that callers
// holding less than a whole object (the redirect index) need not fabricate
// one.
type Claim struct {
	Namespace, Name string
	// Created is the Domain's creationTimestamp: a tie-break only.
	Created time.Time
	// Current is false when the Domain has no claim on its spec.domain
	// recorded yet (new, or edited and not reconciled); Contested and
	// Proof are then unset.
	Current bool
	// Since is when the claim began: status.claim.since when Current; for
	// a Domain never claimed and never edited (generation 1), its creation,
	// which is where the controller will start its claim. Zero for an
	// edited Domain not reconciled yet: its claim begins when it is
	// recorded, after every other.
	Since     time.Time
	Contested bool
	Proof     kurzv1alpha1.DomainProof
	Deleting  bool
}

// ClaimOf returns d's facts.
func ClaimOf(d *kurzv1alpha1.Domain) Claim {
	c := Claim{Namespace: d.Namespace, Name: d.Name, Created: d.CreationTimestamp.Time, Deleting: d.DeletionTimestamp != nil}
	if cl := d.Status.Claim; cl != nil && cl.Hostname == string(d.Spec.Domain) {
		c.Current, c.Since, c.Contested, c.Proof = true, cl.Since.Time, cl.Contested, cl.Proof
	} else if since, ok := claimsSinceCreation(d); ok {
		c.Since = since
	}
	return c
}

// claimsSinceCreation returns d's creation when d has no claim recorded and
// was never edited: it has claimed its hostname since it was created.
func claimsSinceCreation(d *kurzv1alpha1.Domain) (time.Time, bool) {
	if d.Status.Claim != nil || d.Generation > 1 || d.CreationTimestamp.IsZero() {
		return time.Time{}, false
	}
	return d.CreationTimestamp.Time, true
}

// begun reports whether c's claim has a start: recorded, or counted from
// the Domain's creation.
func (c Claim) begun() bool { return !c.Since.IsZero() }

// CanOwn reports whether c may hold its hostname at all: a live Domain whose
// claim is uncontested or proven by TXT. A Domain without a recorded claim
// is taken as uncontested (the controller records one on its first pass),
// so a cluster without the controller running yet, like `kurz dev` starting,
// still serves. That claim would be contested only if an older claim of
// another workspace held the hostname, and that one ranks before it.
func (c Claim) CanOwn() bool {
	return !c.Deleting && (c.Proof == kurzv1alpha1.ProofTXT || !c.Contested)
}

// Owner returns the index of the claim that holds the hostname among
// claims (all for one hostname), or -1 when none can:
//
//  1. a claim proven by TXT outranks every claim not so proven;
//  2. a contested claim without TXT proof never owns;
//  3. otherwise the oldest claim wins: by when it began (a Domain not
//     reconciled yet and never edited counts from its creation, an edited
//     one after every other), then creation, namespace and name.
//
// A Domain being deleted claims nothing, so its claim passes on at once (to
// an uncontested or TXT-proven claim only).
func Owner(cs []Claim) int {
	owner := -1
	for i := range cs {
		if !cs[i].CanOwn() {
			continue
		}
		if owner < 0 || outranks(cs[i], cs[owner]) {
			owner = i
		}
	}
	return owner
}

// outranks reports whether a's claim beats b's; both can own.
func outranks(a, b Claim) bool {
	if at, bt := a.Proof == kurzv1alpha1.ProofTXT, b.Proof == kurzv1alpha1.ProofTXT; at != bt {
		return at
	}
	if a.begun() != b.begun() {
		return a.begun()
	}
	return begunBefore(a, b)
}

// begunBefore orders claims by when they began, ties (creationTimestamp
// has one-second resolution) broken on creation, namespace and name, so
// every replica reaches the same order. Of two claims begun in the same
// second, one recorded begins first: the controller reached it first, and
// a Domain not reconciled yet may have been created later in that second,
// so a Domain applied in the second another workspace's claim was recorded
// does not take the hostname for a namespace name that sorts first.
func begunBefore(a, b Claim) bool {
	if !a.Since.Equal(b.Since) {
		return a.Since.Before(b.Since)
	}
	if a.Current != b.Current {
		return a.Current
	}
	if !a.Created.Equal(b.Created) {
		return a.Created.Before(b.Created)
	}
	if a.Namespace != b.Namespace {
		return a.Namespace < b.Namespace
	}
	return a.Name < b.Name
}

// DomainOwner returns the Domain that holds a hostname among the Domains that
// claim it (all with the same spec.domain), or nil when none can (see
// Owner). A claim's age is status.claim.since, when the Domain started
// claiming this hostname, not its creation: spec.domain is mutable, and an
// old Domain edited to another workspace's hostname must not take it over.
func DomainOwner(domains []kurzv1alpha1.Domain) *kurzv1alpha1.Domain {
	return pick(domains, ClaimOf, Owner)
}

// ClaimSince returns when d started claiming its spec.domain, and false when
// it has no current claim (status.claim is unset or for another hostname).
func ClaimSince(d *kurzv1alpha1.Domain) (metav1.MicroTime, bool) {
	c := d.Status.Claim
	if c == nil || c.Hostname != string(d.Spec.Domain) {
		return metav1.MicroTime{}, false
	}
	return c.Since, true
}

// KeyWinner returns the Link that holds a (domain, key) among the Links of one
// namespace that claim it, or nil when none can (see KeyHolder).
func KeyWinner(links []kurzv1alpha1.Link) *kurzv1alpha1.Link {
	return pick(links, func(l *kurzv1alpha1.Link) KeyClaim { return KeyClaimOf(l) }, KeyHolder)
}

// pick asks rule which of objs wins, given the facts factsOf finds in
// each, and returns that object (nil when none does).
func pick[O, F any](objs []O, factsOf func(*O) F, rule func([]F) int) *O {
	fs := make([]F, len(objs))
	for i := range objs {
		fs[i] = factsOf(&objs[i])
	}
	if i := rule(fs); i >= 0 {
		return &objs[i]
	}
	return nil
}
