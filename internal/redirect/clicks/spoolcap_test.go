package clicks

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr/funcr"
	. "github.com/onsi/gomega"
	"github.com/prometheus/client_golang/prometheus/testutil"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kurzv1alpha1 "github.com/kurz-dev/kurz/api/v1alpha1"
	"github.com/kurz-dev/kurz/internal/testenv"
	"github.com/kurz-dev/kurz/internal/testenv/apiproxy"
)

// TestSpoolBytesPerLink measures what one pending Link takes in the spool:
// a count (clicks never sent), and a count with its unanswered patch, for
// typical names and for the longest the API allows (namespace 63, name
// 253, writer ids 109 characters, 16 writers in the patch).
// docs/reliability.md's figures come from its FIGURE lines:
//
//	go test -count=1 -run SpoolBytesPerLink -v ./internal/redirect/clicks/ | grep FIGURE
func TestSpoolBytesPerLink(t *testing.T) {
	g := NewWithT(t)
	now := time.Date(2026, 4, 23, 12, 0, 0, 0, time.UTC)
	measure := func(ns, name, me string, writers int, idLen int) (count, withPatch int64) {
		w := newWriter(NewQueue(), nil, nil, 1)
		w.marks.id = me
		w.marks.now = func() time.Time { return now }
		w.marks.seq = 123456
		l := kurzv1alpha1.Link{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, ResourceVersion: "1234567890"}}
		l.Status.Clicks = 98765432
		for i := range writers - 1 {
			id := fmt.Sprintf("%s-%d", strings.Repeat("w", idLen-8), 1000000+i)
			l.Status.ClickWriters = append(l.Status.ClickWriters, kurzv1alpha1.ClickWriter{ID: id, Seq: 654321, Time: metav1.NewTime(now.Add(-time.Hour))})
		}
		pruned := metav1.NewTime(now.Add(-25 * time.Hour))
		l.Status.ClickWritersPrunedThrough = &pruned
		last := now.UnixNano()
		u := w.patchFor(&l, 4321, last)
		uid := types.UID("8f3c2a1e-5b7d-4e9f-a0c1-2d3e4f5a6b7c")
		count = entrySize(&spoolLink{UID: uid, Namespace: ns, Name: name, Clicks: 4321, Last: last})
		withPatch = entrySize(&spoolLink{UID: uid, Namespace: ns, Name: name, Clicks: 4321, Last: last, Unsure: u})
		return count, withPatch
	}
	count, patch := measure("team-payments", "spring-sale-2026", "kurz-7d9f8c6b5-x2k4q-1a2b3c4d", 2, 30)
	wcount, wpatch := measure(strings.Repeat("n", 63), strings.Repeat("l", 253), strings.Repeat("p", 100)+"-1a2b3c4d", maxClickWriters, 109)
	t.Logf("FIGURE spool bytes per pending Link: count %d, count+patch %d (typical names, 2 writers); longest names, 16 writers: %d, %d", count, patch, wcount, wpatch)
	c := spoolCap(DefaultOptions().SpoolSizeLimit, 0)
	t.Logf("FIGURE spool cap at the default 64Mi: %d bytes; counts (3/4 of it) of %d typical Links, %d of the longest",
		c, c/countShareDen*countShareNum/count, c/countShareDen*countShareNum/wcount)
	g.Expect(count).To(BeNumerically("<", 200))
	g.Expect(patch).To(BeNumerically("<", 1024))
	// minSpoolSizeLimit's promise: the write-ahead room of its cap holds
	// the largest entry.
	g.Expect(wpatch).To(BeNumerically("<=", spoolCap(minSpoolSizeLimit, 0)/countShareDen))
}

// TestSpoolFit: what a full spool keeps, and in which order it gives up.
func TestSpoolFit(t *testing.T) {
	g := NewWithT(t)
	entry := func(name string, clicks int64, unsure bool) *spoolEntry {
		e := &spoolEntry{link: spoolLink{UID: types.UID(name), Namespace: "ns", Name: name, Clicks: clicks}}
		if unsure {
			e.link.Unsure = &unsureWrite{Delta: 1}
		}
		e.json = make([]byte, 99) // 100 with its comma
		return e
	}
	names := func(es []*spoolEntry) []string {
		var out []string
		for _, e := range es {
			out = append(out, e.link.Name)
		}
		return out
	}
	s := &spool{cap: 1000}
	all := []*spoolEntry{entry("c1", 1, false), entry("u0", 0, true), entry("c9", 9, false), entry("c5", 5, false),
		entry("c2", 2, false), entry("c7", 7, false), entry("c3", 3, false), entry("c8", 8, false), entry("c4", 4, false), entry("c6", 6, false)}
	// 10 bytes of head and tail: 9 entries fit the cap, counts at most 750
	// bytes: 7 of them.
	keep, drop := s.fit(all, 10)
	g.Expect(names(keep)).To(Equal([]string{"u0", "c9", "c5", "c7", "c3", "c8", "c4", "c6"}), "the unsure write, then most clicks; in file order")
	g.Expect(names(drop)).To(Equal([]string{"c2", "c1"}))

	// Unsure writes alone past the cap: the fewest clicks go.
	s.cap = 250
	keep, drop = s.fit([]*spoolEntry{entry("a", 0, true), entry("b", 5, true), entry("c", 2, true)}, 10)
	g.Expect(names(keep)).To(Equal([]string{"b", "c"}))
	g.Expect(names(drop)).To(Equal([]string{"a"}))

	g.Expect(spoolCap(64<<20, 0)).To(Equal(int64(32<<20 - 8<<10)))
	g.Expect(spoolCap(64<<20, 1<<20)).To(Equal(int64(32<<20-512<<10-8<<10)), "corrupt copies take room")
	g.Expect(spoolCap(1<<10, 0)).To(BeZero())
}

// TestSpoolDropLog: the line that says clicks were dropped comes at once,
// then at most once a minute with the totals since, and the rest when the
// process stops.
func TestSpoolDropLog(t *testing.T) {
	g := NewWithT(t)
	var lines []string
	s := newSpool("/x/clicks.spool", minSpoolSizeLimit)
	s.log = funcr.New(func(prefix, args string) { lines = append(lines, args) }, funcr.Options{})
	s.noteDropped(3, 5, false)
	g.Expect(lines).To(HaveLen(1))
	g.Expect(lines[0]).To(And(ContainSubstring(`"links"=3`), ContainSubstring(`"clicks"=5`), ContainSubstring(`"sizeLimit"="64Ki"`)))
	s.noteDropped(2, 2, false)
	s.noteDropped(1, 4, false)
	g.Expect(lines).To(HaveLen(1), "within the minute")
	s.noteDropped(0, 0, true)
	g.Expect(lines).To(HaveLen(2))
	g.Expect(lines[1]).To(And(ContainSubstring(`"links"=3`), ContainSubstring(`"clicks"=6`)))
	s.noteDropped(0, 0, true)
	g.Expect(lines).To(HaveLen(2), "nothing left to tell")
}

// TestSpoolFullDuringOutage: kube-apiserver is unreachable while more
// Links are clicked than the spool (a small one) can hold. The spool never
// grows past its cap (nor its directory past the volume's limit, with the
// temporary file of the atomic rewrite); the Links with the most clicks are
// kept and the others dropped and counted; once kube-apiserver is back, the
// kept clicks are written exactly once.
func TestSpoolFullDuringOutage(t *testing.T) {
	testenv.Need(t)
	g := NewWithT(t)
	ctx := context.Background()
	// Long names make each entry take about 300 bytes.
	const popular, once = 30, 90
	links := make([]Link, popular+once)
	for i := range links {
		links[i] = newLink(t, fmt.Sprintf("%s-%03d", strings.Repeat("x", 200), i))
	}
	p := apiproxy.New(t, cfg)
	dir := t.TempDir()
	o := testOptions()
	o.Spool = filepath.Join(dir, "clicks.spool")
	o.SpoolSizeLimit = minSpoolSizeLimit
	capBytes := spoolCap(o.SpoolSizeLimit, 0)
	a := start(t, o, p)
	droppedBefore := testutil.ToFloat64(clicksDropped.WithLabelValues(reasonSpoolFull))

	// The largest spool and directory seen, sampled until the end.
	var mu sync.Mutex
	var maxSpool, maxDir int64
	stop := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		for {
			select {
			case <-stop:
				return
			case <-time.After(time.Millisecond):
			}
			var spool, sum int64
			entries, _ := os.ReadDir(dir)
			for _, e := range entries {
				if info, err := e.Info(); err == nil {
					sum += info.Size()
					if e.Name() == filepath.Base(o.Spool) {
						spool = info.Size()
					}
				}
			}
			mu.Lock()
			maxSpool, maxDir = max(maxSpool, spool), max(maxDir, sum)
			mu.Unlock()
		}
	}()
	defer func() { close(stop); <-sampled }()

	p.SetMode(apiproxy.Down)
	for i, l := range links {
		n := 1
		if i < popular {
			n = 3
		}
		a.ix.click(l, n)
	}
	const total = popular*3 + once
	// Every click is either in the spool or dropped.
	var sf *spoolFile
	g.Eventually(func() int64 {
		sf = readSpool(t, o.Spool)
		if sf == nil {
			return -1
		}
		return sf.total() + a.droppedClicks.Load()
	}, 30*time.Second).Should(Equal(int64(total)))
	kept, dropped := sf.total(), a.droppedClicks.Load()
	t.Logf("FIGURE spool full: %d Links clicked, %d kept (%d clicks) in %d bytes (cap %d), %d clicks dropped",
		popular+once, len(sf.Links), kept, fileSize(t, o.Spool), capBytes, dropped)
	g.Expect(len(sf.Links)).To(BeNumerically("<", popular+once), "more Links than fit")
	g.Expect(dropped).To(BeNumerically(">", 0))
	g.Expect(testutil.ToFloat64(clicksDropped.WithLabelValues(reasonSpoolFull)) - droppedBefore).To(Equal(float64(dropped)))
	spooled := map[string]int64{}
	for _, l := range sf.Links {
		spooled[l.Name] = l.Clicks
		if l.Unsure != nil {
			spooled[l.Name] += l.Unsure.Delta
		}
	}
	for _, l := range links[:popular] {
		g.Expect(spooled).To(HaveKeyWithValue(l.Name, int64(3)), "the Links with the most clicks are kept")
	}

	// kube-apiserver answers again: the kept clicks are written, once.
	p.SetMode(apiproxy.Pass)
	ours := map[string]bool{}
	for _, l := range links {
		ours[l.Name] = true
	}
	sum := func() map[string]int64 {
		var ls kurzv1alpha1.LinkList
		g.Expect(k8s.List(ctx, &ls, client.InNamespace(ns))).To(Succeed())
		out := map[string]int64{}
		for _, l := range ls.Items {
			if ours[l.Name] && l.Status.Clicks != 0 {
				out[l.Name] = l.Status.Clicks
			}
		}
		return out
	}
	g.Eventually(sum, 60*time.Second).Should(Equal(spooled))
	g.Eventually(func() *spoolFile { return readSpool(t, o.Spool) }, 30*time.Second).Should(BeNil())
	g.Consistently(sum, 2*time.Second).Should(Equal(spooled))
	g.Expect(a.droppedClicks.Load()).To(Equal(dropped), "nothing dropped after the outage")

	mu.Lock()
	defer mu.Unlock()
	t.Logf("FIGURE spool full: largest spool %d bytes (cap %d), largest directory %d bytes (limit %d)", maxSpool, capBytes, maxDir, o.SpoolSizeLimit)
	g.Expect(maxSpool).To(BeNumerically(">", capBytes/2), "the sampler saw the spool")
	g.Expect(maxSpool).To(BeNumerically("<=", capBytes))
	g.Expect(maxDir).To(BeNumerically("<=", o.SpoolSizeLimit-spoolSlack))
}

func fileSize(t *testing.T, path string) int64 {
	t.Helper()
	info, err := os.Stat(path)
	NewWithT(t).Expect(err).NotTo(HaveOccurred())
	return info.Size()
}
