package linkquery

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"syscall"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	kurzv1alpha1 "github.com/kurz-dev/kurz/api/v1alpha1"
)

const benchLinks = 100_000

// benchLinkSet is benchLinks links of one namespace as a workspace holds
// them: keys k<i>, a URL of about 50 characters, one of 20 tags on half of
// them, a tenth clicked, a few expired or conflicting, a few protected.
func benchLinkSet() []*kurzv1alpha1.Link {
	rng := rand.New(rand.NewPCG(1, 2))
	start := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	links := make([]*kurzv1alpha1.Link, benchLinks)
	for i := range links {
		created := metav1.NewMicroTime(start.Add(time.Duration(i) * time.Second))
		l := &kurzv1alpha1.Link{
			ObjectMeta: metav1.ObjectMeta{
				Namespace: "bench", Name: fmt.Sprintf("k%d-abcde", i),
				UID: types.UID(fmt.Sprintf("%08x-%04x-4%03x-8000-%012d", rng.Uint32(), rng.IntN(1<<16), rng.IntN(1<<12), i)),
			},
			Spec: kurzv1alpha1.LinkSpec{
				Domain: "go.example.com", Key: fmt.Sprintf("k%d", i),
				URL: kurzv1alpha1.URL(fmt.Sprintf("https://shop.example.com/products/%d?ref=campaign", i)),
			},
			Status: kurzv1alpha1.LinkStatus{CreatedAt: &created, UpdatedAt: &created},
		}
		if i%2 == 0 {
			l.Spec.Tags = []string{fmt.Sprintf("tag%d", i/2%20)}
		}
		if i%10 == 0 {
			lc := metav1.NewTime(start.Add(time.Duration(benchLinks+rng.IntN(benchLinks)) * time.Second))
			l.Status.Clicks, l.Status.LastClickTime = int64(rng.IntN(1000)), &lc
		}
		reason := kurzv1alpha1.ReasonActive
		switch i % 50 {
		case 1:
			reason = kurzv1alpha1.ReasonExpired
		case 2:
			reason = kurzv1alpha1.ReasonKeyConflict
		}
		l.Status.Conditions = []metav1.Condition{{Type: kurzv1alpha1.ConditionReady, Reason: reason}}
		if i%100 == 0 {
			h := "$2a$10$abcdefghijklmnopqrstuuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ012"
			l.Spec.PasswordHash = &h
		}
		links[i] = l
	}
	rng.Shuffle(len(links), func(i, j int) { links[i], links[j] = links[j], links[i] })
	return links
}

func loadIndex(links []*kurzv1alpha1.Link) *Index {
	ix := New(createdAt, updatedAt)
	for _, l := range links {
		ix.Upsert(l)
	}
	return ix
}

// BenchmarkQuery is one page of 100 000 links for each filter and sort,
// first and last page (the last page of the whole list where the filter
// keeps it all).
func BenchmarkQuery(b *testing.B) {
	ix := loadIndex(benchLinkSet())
	yes := true
	for _, bc := range []struct {
		name string
		q    Query
	}{
		{"created", Query{Sort: Sort{By: ByCreated, Reverse: true}}},
		{"key", Query{Sort: Sort{By: ByKey}}},
		{"-key", Query{Sort: Sort{By: ByKey, Reverse: true}}},
		{"clicks", Query{Sort: Sort{By: ByClicks}}},
		{"-clicks", Query{Sort: Sort{By: ByClicks, Reverse: true}}},
		{"last_click", Query{Sort: Sort{By: ByLastClick}}},
		{"updated", Query{Sort: Sort{By: ByUpdated}}},
		{"tag", Query{Tags: []string{"tag3"}}},
		{"tags-all", Query{Tags: []string{"tag3", "tag13"}, AllTags: true}},
		{"exclude_tag", Query{ExcludeTags: []string{"tag3"}, Sort: Sort{By: ByKey}}},
		{"domain", Query{Domains: []string{"go.example.com"}}},
		{"state", Query{States: []State{StateExpired}}},
		{"created_after", Query{CreatedAfter: time.Date(2025, 1, 1, 12, 0, 0, 0, time.UTC)}},
		{"last_click_before", Query{LastClickBefore: time.Date(2025, 1, 3, 0, 0, 0, 0, time.UTC), Sort: Sort{By: ByLastClick}}},
		{"has_password", Query{HasPassword: &yes}},
		{"search-4", Query{Search: "4242"}},
		{"search-4-key", Query{Search: "4242", Sort: Sort{By: ByKey}}},
		{"search-all", Query{Search: "shop"}},
	} {
		benchPages(b, ix, bc.name, bc.q)
	}
}

// benchPages runs q's first and last page of 25 as sub-benchmarks of b,
// reporting CPU time and allocations; each checks the total it counts.
func benchPages(b *testing.B, ix *Index, name string, q Query) {
	_, total := ix.Query("bench", q, 0, 25)
	for _, page := range []struct {
		name   string
		offset int
	}{{"first", 0}, {"last", max(0, (total-1)/25*25)}} {
		b.Run(name+"/"+page.name, func(b *testing.B) {
			b.ReportAllocs()
			cpu := cpuTime()
			for b.Loop() {
				if _, n := ix.Query("bench", q, page.offset, 25); n != total {
					b.Fatalf("total %d, want %d", n, total)
				}
			}
			reportCPU(b, cpu)
		})
	}
}

// cpuTime is the CPU time this process has used: on a busy machine the
// wall time of an operation says more about the other processes.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// reportCPU reports the CPU time per operation since start.
func reportCPU(b *testing.B, start time.Duration) {
	b.ReportMetric(float64(cpuTime()-start)/float64(b.N)/1e6, "cpu-ms/op")
}

// BenchmarkUpsert replaces records, as click flushes do.
func BenchmarkUpsert(b *testing.B) {
	links := benchLinkSet()
	ix := loadIndex(links)
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		ix.Upsert(links[i%len(links)])
		i++
	}
}

// BenchmarkLoad fills an index with 100 000 links, as an informer's first
// list does. liveB/link is what the index itself keeps per link (the Links
// belong to the informer).
func BenchmarkLoad(b *testing.B) {
	links := benchLinkSet()
	for b.Loop() {
		loadIndex(links)
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	ix := loadIndex(links)
	runtime.GC()
	runtime.ReadMemStats(&after)
	b.ReportMetric((float64(after.HeapAlloc)-float64(before.HeapAlloc))/benchLinks, "liveB/link")
	runtime.KeepAlive(ix)
}
