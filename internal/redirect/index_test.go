package redirect

import (
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"
	"unsafe"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	kurzv1alpha1 "github.com/kurz-dev/kurz/api/v1alpha1"
	"github.com/kurz-dev/kurz/internal/redirect/clicks"
)

var epoch = time.Unix(1_700_000_000, 0)

func testDomain(ns, name, host string, age int) *kurzv1alpha1.Domain {
	return &kurzv1alpha1.Domain{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, UID: types.UID(ns + "/" + name), Generation: 1,
			CreationTimestamp: metav1.NewTime(epoch.Add(time.Duration(age) * time.Second))},
		Spec: kurzv1alpha1.DomainSpec{Domain: kurzv1alpha1.Hostname(host)},
	}
}

func testLink(ns, name, host, key string, age int) *kurzv1alpha1.Link {
	return &kurzv1alpha1.Link{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, UID: types.UID(ns + "/" + name), Generation: 1,
			CreationTimestamp: metav1.NewTime(epoch.Add(time.Duration(age) * time.Second))},
		Spec: kurzv1alpha1.LinkSpec{Domain: kurzv1alpha1.Hostname(host), Key: key,
			URL: kurzv1alpha1.URL("https://dest.example/" + ns + "/" + name)},
	}
}

// served returns the destination serving host/key, or "" when none does.
func served(ix *Index, host, key string) string {
	r := ix.lookup([]byte(host), []byte(key))
	if r.entry == nil {
		return ""
	}
	return r.entry.url + r.entry.urlUTM
}

func TestIndexClaims(t *testing.T) {
	g := NewWithT(t)
	ix := NewIndex()

	// A Link without its Domain does not serve; it does once the Domain comes.
	ix.UpsertLink(testLink("a", "l1", "go.test", "k", 10))
	g.Expect(served(ix, "go.test", "k")).To(BeEmpty())
	ix.UpsertDomain(testDomain("a", "d", "go.test", 5))
	g.Expect(served(ix, "go.test", "k")).To(Equal("https://dest.example/a/l1"))

	// Another namespace's later claim on the hostname serves nothing of its own.
	ix.UpsertDomain(testDomain("b", "d", "go.test", 6))
	ix.UpsertLink(testLink("b", "l1", "go.test", "other", 1))
	g.Expect(served(ix, "go.test", "other")).To(BeEmpty())

	// Key conflict in one namespace: the oldest wins; when it goes, the next serves.
	ix.UpsertLink(testLink("a", "l0", "go.test", "k", 20))
	g.Expect(served(ix, "go.test", "k")).To(Equal("https://dest.example/a/l1"))
	ix.DeleteLink(types.NamespacedName{Namespace: "a", Name: "l1"})
	g.Expect(served(ix, "go.test", "k")).To(Equal("https://dest.example/a/l0"))

	// The owning Domain goes: the other namespace takes the hostname over.
	ix.DeleteDomain(types.NamespacedName{Namespace: "a", Name: "d"})
	g.Expect(served(ix, "go.test", "k")).To(BeEmpty())
	g.Expect(served(ix, "go.test", "other")).To(Equal("https://dest.example/b/l1"))

	// A Domain being deleted no longer claims.
	d := testDomain("b", "d", "go.test", 6)
	d.DeletionTimestamp = &d.CreationTimestamp
	d.Generation = 2
	ix.UpsertDomain(d)
	g.Expect(ix.lookup([]byte("go.test"), nil).hostFound).To(BeFalse())

	// A Link moved to another key leaves the old one.
	ix.UpsertDomain(testDomain("c", "d", "c.test", 1))
	l := testLink("c", "m", "c.test", "old", 1)
	ix.UpsertLink(l)
	l = l.DeepCopy()
	l.Spec.Key, l.Generation = "new", 2
	ix.UpsertLink(l)
	g.Expect(served(ix, "c.test", "old")).To(BeEmpty())
	g.Expect(served(ix, "c.test", "new")).To(Equal("https://dest.example/c/m"))
}

// A Link's entry is rebuilt when the Link is edited and when its status is
// written, so the index holds the strings of the object the cache holds and
// not of the one it dropped; its clicks go on into the same Slot. A Link
// deleted and created again under its name (another uid) gets a new Slot.
func TestIndexRebuildsEntryAndKeepsItsClicks(t *testing.T) {
	for _, tt := range []struct {
		name   string
		change func(*kurzv1alpha1.Link)
		same   bool
	}{
		{"edit", func(l *kurzv1alpha1.Link) { l.Spec.URL, l.Generation = "https://changed.example/", 2 }, true},
		{"status write", func(l *kurzv1alpha1.Link) {
			l.Spec.URL = kurzv1alpha1.URL(strings.Clone(string(l.Spec.URL))) // decoded: memory of its own
			l.Status.Clicks = 1
		}, true},
		{"recreated", func(l *kurzv1alpha1.Link) { l.UID = "a/l-2" }, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			ix := NewIndex()
			ix.UpsertDomain(testDomain("a", "d", "go.test", 1))
			l := testLink("a", "l", "go.test", "k", 1)
			ix.UpsertLink(l)
			before := ix.lookup([]byte("go.test"), []byte("k")).entry

			changed := l.DeepCopy()
			tt.change(changed)
			ix.UpsertLink(changed)
			e := ix.lookup([]byte("go.test"), []byte("k")).entry
			g.Expect(unsafe.StringData(e.url)).To(BeIdenticalTo(unsafe.StringData(string(changed.Spec.URL))),
				"the URL of the object the cache holds")
			if tt.same {
				g.Expect(e.slot).To(BeIdenticalTo(before.slot), "one Slot across the change")
			} else {
				g.Expect(e.slot).NotTo(BeIdenticalTo(before.slot))
			}
			g.Expect(e.ClickedLink()).To(Equal(clicks.Link{UID: changed.UID, Namespace: "a", Name: "l"}))
			g.Expect(ix.counterFor(e.ClickedLink())).To(BeIdenticalTo(e.slot.Counter(e.ClickedLink())), "the spool replays into the Slot's Counter")
			g.Expect(ix.counterFor(clicks.Link{UID: "gone", Namespace: "a", Name: "l"})).To(BeNil(), "a Link the index does not hold")
		})
	}
}

// BenchmarkIndexMemory reports the index's heap per link (B/link) beyond the
// cached objects, for links with every field a redirect uses set: built from
// the cached objects, and built from earlier objects and then given the
// cached ones, as after a status write of every link (the controllers'
// first, or a click flush: the cache decodes it into a new object with
// strings of its own).
func BenchmarkIndexMemory(b *testing.B) {
	for _, statusWrite := range []bool{false, true} {
		name := "created"
		if statusWrite {
			name = "after a status write"
		}
		b.Run(name, func(b *testing.B) {
			const n = 10000
			var perLink float64
			for range b.N {
				cached := make([]*kurzv1alpha1.Link, n)
				for i := range cached {
					cached[i] = memoryTestLink(i)
				}
				before := heapAlloc()
				ix := NewIndex()
				ix.UpsertDomain(testDomain("ns", "d", "go.test", 1))
				if statusWrite {
					for i := range n {
						ix.UpsertLink(memoryTestLink(i))
					}
				}
				for _, l := range cached {
					ix.UpsertLink(l)
				}
				perLink = float64(heapAlloc()-before) / n
				runtime.KeepAlive(ix)
				runtime.KeepAlive(cached)
			}
			b.ReportMetric(perLink, "B/link")
		})
	}
}

// memoryTestLink is link i of BenchmarkIndexMemory, in memory of its own as
// a decoded object is.
func memoryTestLink(i int) *kurzv1alpha1.Link {
	l := testLink("ns", fmt.Sprintf("link-%d", i), "go.test", fmt.Sprintf("key-%d", i), 2)
	l.UID = types.UID(fmt.Sprintf("0b6c1f9e-2f2c-4c1e-9a57-%012d", i))
	src, camp := "kurz", "spring"
	l.Spec.UTM = &kurzv1alpha1.LinkUTM{Source: &src, Campaign: &camp}
	ios := kurzv1alpha1.URL(fmt.Sprintf("https://apps.apple.com/app/id%d", i))
	l.Spec.IOS = &ios
	exp := metav1.NewTime(epoch)
	l.Spec.ExpiresAt = &exp
	return l
}

func heapAlloc() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// After a watch gap, a Domain deleted and created again under the same name
// arrives as one update, both objects at generation 1: the new one's data
// must replace the old one's.
func TestIndexDomainRecreated(t *testing.T) {
	g := NewWithT(t)
	ix := NewIndex()
	old := testDomain("a", "d", "go.test", 1)
	old.Spec.NotFoundURL = ptrURL("https://old.example/")
	ix.UpsertDomain(old)
	g.Expect(ix.lookup([]byte("go.test"), nil).notFoundURL).To(Equal("https://old.example/"))

	recreated := testDomain("a", "d", "go.test", 50)
	recreated.UID = "a/d-2"
	recreated.Spec.NotFoundURL = ptrURL("https://new.example/")
	ix.UpsertDomain(recreated)
	g.Expect(ix.lookup([]byte("go.test"), nil).notFoundURL).To(Equal("https://new.example/"))
	g.Expect(ix.domains[types.NamespacedName{Namespace: "a", Name: "d"}].created()).To(BeTemporally("==", recreated.CreationTimestamp.Time))
}

func ptrURL(s string) *kurzv1alpha1.URL {
	u := kurzv1alpha1.URL(s)
	return &u
}

func withClaim(d *kurzv1alpha1.Domain, host string, since int) *kurzv1alpha1.Domain {
	d.Status.Claim = &kurzv1alpha1.DomainClaim{Hostname: host, Since: metav1.NewMicroTime(epoch.Add(time.Duration(since) * time.Second))}
	return d
}

// The oldest claim holds a hostname, not the oldest Domain: an old Domain
// edited to another workspace's hostname does not take it over, and a
// status-only write recording a claim is not ignored.
func TestIndexOldestClaimWins(t *testing.T) {
	g := NewWithT(t)
	ix := NewIndex()
	ix.UpsertDomain(withClaim(testDomain("a", "d", "old.test", 1), "old.test", 1))
	ix.UpsertDomain(withClaim(testDomain("b", "d", "victim.test", 10), "victim.test", 10))
	ix.UpsertLink(testLink("a", "l", "victim.test", "k", 1))
	ix.UpsertLink(testLink("b", "l", "victim.test", "k", 20))
	g.Expect(served(ix, "victim.test", "k")).To(Equal("https://dest.example/b/l"))

	// A edits its hostname: its claim is for old.test, so it claims nothing yet.
	edited := withClaim(testDomain("a", "d", "victim.test", 1), "old.test", 1)
	edited.Generation = 2
	ix.UpsertDomain(edited)
	g.Expect(served(ix, "victim.test", "k")).To(Equal("https://dest.example/b/l"))
	// The controller records A's claim, younger than B's.
	ix.UpsertDomain(withClaim(edited.DeepCopy(), "victim.test", 100))
	g.Expect(served(ix, "victim.test", "k")).To(Equal("https://dest.example/b/l"))
	// B goes: A holds the hostname.
	ix.DeleteDomain(types.NamespacedName{Namespace: "b", Name: "d"})
	g.Expect(served(ix, "victim.test", "k")).To(Equal("https://dest.example/a/l"))

	// Without claims the older Domain holds: a new Domain claims its
	// hostname since its creation, recorded or not (a controller behind).
	ix.UpsertDomain(testDomain("c", "d", "new.test", 1))
	ix.UpsertDomain(testDomain("e", "d", "new.test", 2))
	ix.UpsertLink(testLink("c", "l", "new.test", "k", 1))
	ix.UpsertLink(testLink("e", "l", "new.test", "k", 1))
	g.Expect(served(ix, "new.test", "k")).To(Equal("https://dest.example/c/l"))
	ix.UpsertDomain(withClaim(testDomain("e", "d", "new.test", 2), "new.test", 2))
	g.Expect(served(ix, "new.test", "k")).To(Equal("https://dest.example/c/l"), "the younger claim, recorded")
	// A claim proven by a status-only write (same generation) is seen.
	proven := withClaim(testDomain("e", "d", "new.test", 2), "new.test", 2)
	proven.Status.Claim.Proof = kurzv1alpha1.ProofTXT
	ix.UpsertDomain(proven)
	g.Expect(served(ix, "new.test", "k")).To(Equal("https://dest.example/e/l"))
}

// TestIndexSquatterNeverInherits: the index follows claims' ownership
// rules. A squatter's contested claim (begun while the victim held the
// hostname) is never served, even once the victim's Domain is gone, until
// its TXT record proves it; a status-only write that proves it is seen.
func TestIndexSquatterNeverInherits(t *testing.T) {
	g := NewWithT(t)
	ix := NewIndex()
	victim := withClaim(testDomain("victim", "d", "links.victim.test", 1), "links.victim.test", 1)
	victim.Status.Claim.Proof = kurzv1alpha1.ProofTarget
	squat := withClaim(testDomain("squat", "d", "links.victim.test", 10), "links.victim.test", 10)
	squat.Status.Claim.Contested, squat.Status.Claim.Proof = true, kurzv1alpha1.ProofTarget
	ix.UpsertDomain(victim)
	ix.UpsertDomain(squat)
	ix.UpsertLink(testLink("victim", "l", "links.victim.test", "k", 1))
	ix.UpsertLink(testLink("squat", "l", "links.victim.test", "k", 1))
	g.Expect(served(ix, "links.victim.test", "k")).To(Equal("https://dest.example/victim/l"))

	ix.DeleteDomain(types.NamespacedName{Namespace: "victim", Name: "d"})
	g.Expect(ix.lookup([]byte("links.victim.test"), []byte("k")).hostFound).To(BeFalse(), "nobody serves the hostname")

	// Recreated: a new, uncontested claim, younger than the squatter's.
	again := withClaim(testDomain("victim", "d", "links.victim.test", 50), "links.victim.test", 50)
	again.UID = "victim/d-2"
	ix.UpsertDomain(again)
	g.Expect(served(ix, "links.victim.test", "k")).To(Equal("https://dest.example/victim/l"))

	// The squatter's claim proven by TXT (a status-only write): only the
	// DNS owner can publish that record, and it outranks every other.
	proven := squat.DeepCopy()
	proven.Status.Claim.Proof = kurzv1alpha1.ProofTXT
	ix.UpsertDomain(proven)
	g.Expect(served(ix, "links.victim.test", "k")).To(Equal("https://dest.example/squat/l"))
}

func TestEntryOfAPlainLinkSharesItsRareFields(t *testing.T) {
	g := NewWithT(t)
	g.Expect(int(unsafe.Sizeof(Entry{}))).To(Equal(64), "an Entry is one cache line of the 64-byte size class")
	plain := newEntry(testLink("ns", "a", "go.test", "a", 1), nil, nil, clicks.NewQueue())
	g.Expect(plain.entryRare).To(BeIdenticalTo(noRare))
	l := testLink("ns", "b", "go.test", "b", 1)
	h := "$2a$04$abcdefghijklmnopqrstuu5Tp1yRHq0nqj4WChEvUyMIhX1BsHQOW"
	l.Spec.PasswordHash = &h
	protected := newEntry(l, nil, nil, clicks.NewQueue())
	g.Expect(protected.passwordHash).To(Equal(h))
	g.Expect(noRare.passwordHash).To(BeEmpty(), "the shared part is never written")
}

// A Link's record stays in the 96-byte size class: every replica holds
// one per Link.
func TestLinkRecSize(t *testing.T) {
	if s := unsafe.Sizeof(linkRec{}); s > 96 {
		t.Fatalf("linkRec is %d bytes, want at most 96", s)
	}
}
