package linkquery

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	kurzv1alpha1 "github.com/kurz-dev/kurz/api/v1alpha1"
)

func createdAt(l *kurzv1alpha1.Link) time.Time {
	if l.Status.CreatedAt != nil {
		return l.Status.CreatedAt.Time
	}
	return l.CreationTimestamp.Time
}

func updatedAt(l *kurzv1alpha1.Link) time.Time {
	if l.Status.UpdatedAt != nil {
		return l.Status.UpdatedAt.Time
	}
	return l.CreationTimestamp.Time
}

var (
	t0        = time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	testHosts = []string{"go.example.com", "links.example.org", "x.example.net"}
	testTags  = []string{"sale", "2026", "Docs", "team:web", "a b", "q1", "q2", "internal"}
	reasons   = []string{"", kurzv1alpha1.ReasonActive, kurzv1alpha1.ReasonExpired, kurzv1alpha1.ReasonKeyConflict, kurzv1alpha1.ReasonDomainNotFound, "Other"}
	keyStems  = []string{"a", "B", "docs", "campaign", "campaign-2026-", "campaign-2026-spring-", "Z_", "k-"}
)

// randomLink is a link with values drawn from small ranges, so that every
// sort meets ties (times to the second, few click counts, keys and uids
// sharing their first 8 bytes) and every filter matches some links.
func randomLink(rng *rand.Rand, ns string, i int) *kurzv1alpha1.Link {
	uid := fmt.Sprintf("%08x-0000-4000-8000-%012x", rng.IntN(4), i)
	if rng.IntN(2) == 0 {
		uid = fmt.Sprintf("%08x-%04x-4000-8000-%012x", rng.Uint32(), rng.IntN(1<<16), i)
	}
	key := keyStems[rng.IntN(len(keyStems))]
	if rng.IntN(4) > 0 {
		key += fmt.Sprint(rng.IntN(40))
	}
	l := &kurzv1alpha1.Link{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: ns, Name: fmt.Sprintf("l%d", i), UID: types.UID(uid),
			CreationTimestamp: metav1.NewTime(t0.Add(time.Duration(rng.IntN(30)) * time.Second)),
		},
		Spec: kurzv1alpha1.LinkSpec{
			Domain: kurzv1alpha1.Hostname(testHosts[rng.IntN(len(testHosts))]),
			Key:    key,
			URL:    kurzv1alpha1.URL(fmt.Sprintf("https://Shop.Example.com/%s/%d?Ref=News", []string{"Docs", "sale", "x"}[rng.IntN(3)], rng.IntN(100))),
		},
		Status: kurzv1alpha1.LinkStatus{Clicks: int64(rng.IntN(4))},
	}
	if rng.IntN(2) == 0 {
		c := metav1.NewMicroTime(t0.Add(time.Duration(rng.IntN(30_000_000)) * time.Microsecond))
		l.Status.CreatedAt = &c
	}
	if rng.IntN(2) == 0 {
		u := metav1.NewMicroTime(t0.Add(time.Duration(rng.IntN(30)) * time.Second))
		l.Status.UpdatedAt = &u
	}
	if rng.IntN(3) > 0 {
		lc := metav1.NewTime(t0.Add(time.Duration(rng.IntN(20)) * time.Second))
		l.Status.LastClickTime = &lc
	}
	for _, t := range testTags {
		if rng.IntN(4) == 0 {
			l.Spec.Tags = append(l.Spec.Tags, t)
		}
	}
	if rng.IntN(3) == 0 {
		h := "$2a$10$abcdefghijklmnopqrstuuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ012"
		l.Spec.PasswordHash = &h
	}
	if r := reasons[rng.IntN(len(reasons))]; r != "" {
		l.Status.Conditions = []metav1.Condition{{Type: kurzv1alpha1.ConditionReady, Reason: r}}
	}
	return l
}

// want is the brute-force answer: every link of ns that matches q, fully
// sorted, computed from the Links themselves.
func want(links map[types.UID]*kurzv1alpha1.Link, ns string, q Query) []*kurzv1alpha1.Link {
	var out []*kurzv1alpha1.Link
	for _, l := range links {
		if l.Namespace == ns && refMatch(l, &q) {
			out = append(out, l)
		}
	}
	slices.SortFunc(out, func(a, b *kurzv1alpha1.Link) int { return refCompare(a, b, q.Sort) })
	return out
}

func refMatch(l *kurzv1alpha1.Link, q *Query) bool {
	if q.Search != "" {
		s := strings.ToLower(q.Search)
		if !strings.Contains(strings.ToLower(l.Spec.Key), s) && !strings.Contains(strings.ToLower(string(l.Spec.URL)), s) &&
			!strings.Contains(strings.ToLower(string(l.Spec.Domain)), s) {
			return false
		}
	}
	if len(q.Domains) > 0 && !slices.Contains(q.Domains, string(l.Spec.Domain)) {
		return false
	}
	if len(q.Tags) > 0 {
		if q.AllTags {
			for _, t := range q.Tags {
				if !slices.Contains(l.Spec.Tags, t) {
					return false
				}
			}
		} else if !slices.ContainsFunc(q.Tags, func(t string) bool { return slices.Contains(l.Spec.Tags, t) }) {
			return false
		}
	}
	if slices.ContainsFunc(q.ExcludeTags, func(t string) bool { return slices.Contains(l.Spec.Tags, t) }) {
		return false
	}
	if len(q.States) > 0 && !slices.Contains(q.States, StateOf(l)) {
		return false
	}
	if !q.CreatedAfter.IsZero() && !createdAt(l).After(q.CreatedAfter) {
		return false
	}
	if !q.CreatedBefore.IsZero() && !createdAt(l).Before(q.CreatedBefore) {
		return false
	}
	if !q.LastClickBefore.IsZero() && l.Status.LastClickTime != nil && !l.Status.LastClickTime.Time.Before(q.LastClickBefore) {
		return false
	}
	return q.HasPassword == nil || *q.HasPassword == (l.Spec.PasswordHash != nil)
}

// refCompare orders two links by the sort's field in its direction, then
// by uid in the same direction.
func refCompare(a, b *kurzv1alpha1.Link, s Sort) int {
	var c int
	lastClick := func(l *kurzv1alpha1.Link) int64 {
		if l.Status.LastClickTime == nil {
			return 0
		}
		return l.Status.LastClickTime.Unix()
	}
	switch s.By {
	case ByCreated:
		c = createdAt(a).Compare(createdAt(b))
	case ByUpdated:
		c = updatedAt(a).Compare(updatedAt(b))
	case ByKey:
		c = strings.Compare(a.Spec.Key, b.Spec.Key)
	case ByClicks:
		c = cmp.Compare(a.Status.Clicks, b.Status.Clicks)
	case ByLastClick:
		c = cmp.Compare(lastClick(a), lastClick(b))
	}
	if c == 0 {
		c = strings.Compare(string(a.UID), string(b.UID))
	}
	if !s.ascending() {
		c = -c
	}
	return c
}

// randomQuery draws filters and a sort; its times are often exactly a
// link's (from links), where "after" and "before" must exclude it.
func randomQuery(rng *rand.Rand, links map[types.UID]*kurzv1alpha1.Link) Query {
	var q Query
	var times []time.Time
	for _, l := range links {
		times = append(times, createdAt(l))
		if l.Status.LastClickTime != nil {
			times = append(times, l.Status.LastClickTime.Time)
		}
	}
	at := func(random time.Time) time.Time {
		if rng.IntN(2) == 0 && len(times) > 0 {
			return times[rng.IntN(len(times))]
		}
		return random
	}
	pick := func(from []string) []string {
		var out []string
		for range 1 + rng.IntN(2) {
			out = append(out, from[rng.IntN(len(from))])
		}
		return out
	}
	if rng.IntN(3) == 0 {
		q.Search = []string{"DOCS", "camp", "example.org", "ref=news", "zz-none", "b", "2026-s"}[rng.IntN(7)]
	}
	if rng.IntN(4) == 0 {
		q.Domains = pick(append(testHosts, "unknown.example"))
	}
	if rng.IntN(3) == 0 {
		q.Tags, q.AllTags = pick(append(testTags, "nope")), rng.IntN(2) == 0
	}
	if rng.IntN(4) == 0 {
		q.ExcludeTags = pick(append(testTags, "nope"))
	}
	if rng.IntN(4) == 0 {
		q.States = []State{State(1 + rng.IntN(4))}
	}
	if rng.IntN(4) == 0 {
		q.CreatedAfter = at(t0.Add(time.Duration(rng.IntN(30_000_000)) * time.Microsecond))
	}
	if rng.IntN(4) == 0 {
		q.CreatedBefore = at(t0.Add(time.Duration(rng.IntN(30)) * time.Second))
	}
	if rng.IntN(4) == 0 {
		q.LastClickBefore = at(t0.Add(time.Duration(rng.IntN(20))*time.Second + time.Duration(rng.IntN(2))*time.Second/2))
	}
	if rng.IntN(4) == 0 {
		b := rng.IntN(2) == 0
		q.HasPassword = &b
	}
	q.Sort = Sort{By: Field(rng.IntN(5)), Reverse: rng.IntN(2) == 0}
	return q
}

func uidsOf(links []*kurzv1alpha1.Link) []string {
	out := make([]string, len(links))
	for i, l := range links {
		out[i] = string(l.UID)
	}
	return out
}

// TestQueryAgainstBruteForce runs random queries on random namespaces,
// changed by random upserts and deletes between rounds, and compares every
// page with the brute-force answer.
func TestQueryAgainstBruteForce(t *testing.T) {
	checkAgainstBruteForce(t, New(createdAt, updatedAt))
}

// TestQueryWithCollidingHashes is the same with uids hashed to four
// values: records are found through the overflow of slots.
func TestQueryWithCollidingHashes(t *testing.T) {
	ix := New(createdAt, updatedAt)
	ix.hash = func(uid types.UID) uint64 { return uint64(uid[len(uid)-1] % 4) }
	checkAgainstBruteForce(t, ix)
}

// TestQueryScannedInParallel is the same with scans split among 4
// goroutines from 50 links on.
func TestQueryScannedInParallel(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4))
	defer func(n int) { scanChunk = n }(scanChunk)
	scanChunk = 50
	checkAgainstBruteForce(t, New(createdAt, updatedAt))
}

// TestQueryPagesFromBothEnds is the same with pages chosen during the scan
// only within 40 of either end: pages from the start, pages from the end
// (in the reverse order) and pages in between (a second scan) all meet
// the brute force, in one goroutine and in four.
func TestQueryPagesFromBothEnds(t *testing.T) {
	defer func(n int) { maxTopK = n }(maxTopK)
	maxTopK = 40
	checkAgainstBruteForce(t, New(createdAt, updatedAt))
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4))
	defer func(n int) { scanChunk = n }(scanChunk)
	scanChunk = 50
	checkAgainstBruteForce(t, New(createdAt, updatedAt))
}

func checkAgainstBruteForce(t *testing.T, ix *Index) {
	rng := rand.New(rand.NewPCG(7, 8))
	links := map[types.UID]*kurzv1alpha1.Link{}
	n := 0
	for round := range 6 {
		// Grow, change and shrink both namespaces.
		for range 150 {
			ns := []string{"a", "b"}[rng.IntN(2)]
			l := randomLink(rng, ns, n)
			n++
			links[l.UID] = l
			ix.Upsert(l)
		}
		for uid, l := range links {
			switch rng.IntN(6) {
			case 0:
				ix.Delete(l)
				delete(links, uid)
			case 1:
				nl := randomLink(rng, l.Namespace, n)
				nl.UID, nl.Name = l.UID, l.Name
				links[uid] = nl
				ix.Upsert(nl)
			}
		}
		for range 150 {
			q := randomQuery(rng, links)
			w := want(links, "a", q)
			offset := []int{0, 25, len(w) - len(w)%25, rng.IntN(len(w) + 1)}[rng.IntN(4)]
			got, total := ix.Query("a", q, offset, 25)
			if total != len(w) {
				t.Fatalf("round %d, %+v: total %d, want %d", round, q, total, len(w))
			}
			start, end := min(offset, len(w)), min(offset+25, len(w))
			if !slices.Equal(uidsOf(got), uidsOf(w[start:end])) {
				t.Fatalf("round %d, %+v, offset %d:\n got %v\nwant %v", round, q, offset, uidsOf(got), uidsOf(w[start:end]))
			}
		}
	}
	checkTagCounts(t, ix, links, "a")
	checkTagCounts(t, ix, links, "b")
}

func checkTagCounts(t *testing.T, ix *Index, links map[types.UID]*kurzv1alpha1.Link, ns string) {
	t.Helper()
	wantCounts := map[string]int{}
	for _, l := range links {
		if l.Namespace == ns {
			for _, tag := range l.Spec.Tags {
				wantCounts[tag]++
			}
		}
	}
	got := map[string]int{}
	for _, tc := range ix.Tags(ns) {
		got[tc.Name] = tc.Links
	}
	NewWithT(t).Expect(got).To(Equal(wantCounts), "tags of %s", ns)
}

// Paging through a sorted list, filtered or not, gives every match once,
// in order, in every sort and direction, with pages chosen from the start, from the
// end and in between (maxTopK 60 of 700 links), in one goroutine and in
// four, with records in random order and in the order of creation; pages
// past the end are empty and say the same total.
func TestQueryPagesCoverAll(t *testing.T) {
	defer func(n int) { maxTopK = n }(maxTopK)
	defer func(n int) { scanChunk = n }(scanChunk)
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4))
	rng := rand.New(rand.NewPCG(9, 10))
	ix := New(createdAt, updatedAt)
	links := map[types.UID]*kurzv1alpha1.Link{}
	var created []*kurzv1alpha1.Link
	for i := range 700 {
		l := randomLink(rng, "a", i)
		links[l.UID] = l
		ix.Upsert(l)
		created = append(created, l)
	}
	// The same links inserted in the order of creation: scans for
	// created_at go backwards (laterFirst).
	slices.SortStableFunc(created, func(a, b *kurzv1alpha1.Link) int { return createdAt(a).Compare(createdAt(b)) })
	inOrder := New(createdAt, updatedAt)
	for _, l := range created {
		inOrder.Upsert(l)
	}
	for _, c := range []struct {
		ix          *Index
		order       string
		topK, chunk int
	}{{ix, "random", 1024, 16384}, {ix, "random", 60, 16384}, {ix, "random", 60, 100}, {inOrder, "created", 60, 16384}, {inOrder, "created", 60, 100}} {
		maxTopK, scanChunk = c.topK, c.chunk
		ix := c.ix
		t.Run(fmt.Sprintf("%s,topK=%d,chunk=%d", c.order, c.topK, c.chunk), func(t *testing.T) {
			g := NewWithT(t)
			for by := range Field(5) {
				for _, q := range []Query{
					{Sort: Sort{By: by}}, {Sort: Sort{By: by, Reverse: true}},
					{Sort: Sort{By: by}, ExcludeTags: []string{"q1"}}, {Sort: Sort{By: by, Reverse: true}, ExcludeTags: []string{"q1"}},
				} {
					w := want(links, "a", q)
					var all []*kurzv1alpha1.Link
					off := 0
					for ; ; off += 25 {
						page, total := ix.Query("a", q, off, 25)
						g.Expect(total).To(Equal(len(w)))
						if len(page) == 0 {
							break
						}
						all = append(all, page...)
					}
					g.Expect(off).To(Equal((len(w) + 24) / 25 * 25))
					g.Expect(uidsOf(all)).To(Equal(uidsOf(w)), "sort %v", q.Sort)
					page, total := ix.Query("a", q, off+25, 25)
					g.Expect(page).To(BeEmpty())
					g.Expect(total).To(Equal(len(w)))
				}
			}
		})
	}
}

// Emptying a namespace forgets it and its ids; its tags are gone.
func TestDeleteEverything(t *testing.T) {
	g := NewWithT(t)
	rng := rand.New(rand.NewPCG(1, 1))
	ix := New(createdAt, updatedAt)
	var ls []*kurzv1alpha1.Link
	for i := range 300 {
		l := randomLink(rng, "a", i)
		ls = append(ls, l)
		ix.Upsert(l)
	}
	g.Expect(ix.Tags("a")).NotTo(BeEmpty())
	for _, l := range ls {
		ix.Delete(l)
		ix.Delete(l) // a second delete is a no-op
	}
	g.Expect(ix.spaces).To(BeEmpty())
	g.Expect(ix.Tags("a")).To(BeEmpty())
	got, total := ix.Query("a", Query{}, 0, 25)
	g.Expect(got).To(BeEmpty())
	g.Expect(total).To(BeZero())
}

// A namespace with more hostnames than record ids hold still filters and
// searches them right, by name.
func TestManyDomains(t *testing.T) {
	g := NewWithT(t)
	ix := New(createdAt, updatedAt)
	var last *kurzv1alpha1.Link
	for i := range maxDomainID + 10 {
		last = &kurzv1alpha1.Link{
			ObjectMeta: metav1.ObjectMeta{Namespace: "a", UID: types.UID(fmt.Sprintf("u%06d", i))},
			Spec:       kurzv1alpha1.LinkSpec{Domain: kurzv1alpha1.Hostname(fmt.Sprintf("h%d.example", i)), Key: "k"},
		}
		ix.Upsert(last)
	}
	got, total := ix.Query("a", Query{Domains: []string{string(last.Spec.Domain)}}, 0, 25)
	g.Expect(total).To(Equal(1))
	g.Expect(got).To(ConsistOf(last))
	_, total = ix.Query("a", Query{Search: "H" + strings.TrimPrefix(string(last.Spec.Domain), "h")}, 0, 25)
	g.Expect(total).To(Equal(1))
	ix.Delete(last)
	_, total = ix.Query("a", Query{Domains: []string{string(last.Spec.Domain)}}, 0, 25)
	g.Expect(total).To(BeZero())
}

func TestContainsFold(t *testing.T) {
	g := NewWithT(t)
	for _, c := range []struct {
		s, needle string
		want      bool
	}{
		{"https://Shop.Example.com/Docs", "docs", true},
		{"https://Shop.Example.com/Docs", "SHOP.EX", true},
		{"abc", "abcd", false},
		{"aab", "ab", true},
		{"Größe", "grö", true}, // ASCII letters fold, the rest must match exactly
		{"Größe", "GRÖ", false},
		{"", "a", false},
	} {
		g.Expect(containsFold(c.s, foldASCII(c.needle))).To(Equal(c.want), "%q in %q", c.needle, c.s)
	}
}

// Queries at once share the pools of buffers, never a buffer: each answer
// is the brute force's (run with -race).
func TestConcurrentQueries(t *testing.T) {
	defer func(n int) { maxTopK = n }(maxTopK)
	defer func(n int) { scanChunk = n }(scanChunk)
	maxTopK, scanChunk = 40, 100
	rng := rand.New(rand.NewPCG(11, 12))
	ix := New(createdAt, updatedAt)
	links := map[types.UID]*kurzv1alpha1.Link{}
	for i := range 500 {
		l := randomLink(rng, "a", i)
		links[l.UID] = l
		ix.Upsert(l)
	}
	type check struct {
		q      Query
		offset int
		want   []string
	}
	var checks []check
	for range 64 {
		q := randomQuery(rng, links)
		w := want(links, "a", q)
		offset := []int{0, 50, len(w) - len(w)%25, rng.IntN(len(w) + 1)}[rng.IntN(4)]
		checks = append(checks, check{q, offset, uidsOf(w[min(offset, len(w)):min(offset+25, len(w))])})
	}
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 200 {
				c := checks[(g*31+i)%len(checks)]
				if got, _ := ix.Query("a", c.q, c.offset, 25); !slices.Equal(uidsOf(got), c.want) {
					t.Errorf("%+v, offset %d:\n got %v\nwant %v", c.q, c.offset, uidsOf(got), c.want)
					return
				}
			}
		})
	}
	wg.Wait()
}
