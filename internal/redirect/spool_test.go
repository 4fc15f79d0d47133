package redirect

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	. "github.com/onsi/gomega"

	kurzv1alpha1 "github.com/kurz-dev/kurz/api/v1alpha1"
	"github.com/kurz-dev/kurz/internal/testenv/apiproxy"
)

// TestSpoolReplay stops a replica while the API server does not answer: its
// clicks go to the spool, and the next start writes them, exactly once,
// whether the unanswered patch among them is applied before the replay,
// after it, or never.
func TestSpoolReplay(t *testing.T) {
	ns, spoolHost := namespaceWithDomain(t, "spool.test")
	for i, tt := range []struct {
		name string
		mode apiproxy.Mode
		// releaseBefore delivers the parked patch before the replay; else
		// after it.
		releaseBefore bool
	}{
		{"unreachable", apiproxy.Down, false},
		{"frozen, applied before the replay", apiproxy.Hold, true},
		{"frozen, applied after the replay", apiproxy.Hold, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			k1, k2 := string(rune('a'+i))+"1", string(rune('a'+i))+"2"
			createLink(t, ns, k1, spoolHost, k1, "https://dest.example/", nil)
			createLink(t, ns, k2, spoolHost, k2, "https://dest.example/", nil)
			p := apiproxy.New(t, cfg)
			path := filepath.Join(t.TempDir(), "clicks.spool")
			o := testOptions()
			o.ClickFlushInterval = time.Hour // only the final flush writes
			o.ClickSpool = path
			o.ShutdownTimeout = 3 * time.Second
			a := startServerOn(t, p.Config(), o)
			for _, k := range []string{k1, k2} {
				g.Eventually(func() int { return do(t, "HEAD", a.base, spoolHost, "/"+k, nil).status }, 30*time.Second).Should(Equal(http.StatusFound))
			}
			hammer(t, a.base, spoolHost, "/"+k1, 5)
			hammer(t, a.base, spoolHost, "/"+k2, 3)

			p.SetMode(tt.mode)
			a.stop()
			var sf spoolFile
			b, err := os.ReadFile(path)
			g.Expect(err).NotTo(HaveOccurred(), "spool written")
			g.Expect(json.Unmarshal(b, &sf)).To(Succeed())
			g.Expect(sf.Links).To(HaveLen(2))
			var total int64
			unsure := 0
			for _, l := range sf.Links {
				total += l.Clicks
				if l.Unsure != nil {
					unsure++
					total += l.Unsure.Delta
				}
			}
			g.Expect(total).To(Equal(int64(8)))
			// The first patch got no answer; the flush stopped there.
			g.Expect(unsure).To(Equal(1))
			g.Expect(clicksOf(t, ns, k1) + clicksOf(t, ns, k2)).To(BeZero())

			p.SetMode(apiproxy.Pass)
			if tt.releaseBefore {
				g.Expect(p.Release(t)).To(Equal([]int{http.StatusOK}))
				g.Expect(clicksOf(t, ns, k1) + clicksOf(t, ns, k2)).To(BeNumerically(">", 0))
			}
			o.ClickFlushInterval = 200 * time.Millisecond
			startServer(t, o) // replays
			g.Eventually(func() []int64 { return []int64{clicksOf(t, ns, k1), clicksOf(t, ns, k2)} }, 30*time.Second).Should(Equal([]int64{5, 3}))
			g.Eventually(func() error { _, err := os.Stat(path); return err }, 30*time.Second).Should(MatchError(os.ErrNotExist))
			if tt.mode == apiproxy.Hold && !tt.releaseBefore {
				g.Expect(p.Release(t)).To(Equal([]int{http.StatusConflict}))
			}
			g.Consistently(func() []int64 { return []int64{clicksOf(t, ns, k1), clicksOf(t, ns, k2)} }, time.Second).Should(Equal([]int64{5, 3}))
			for _, k := range []string{k1, k2} {
				var l kurzv1alpha1.Link
				g.Expect(k8s.Get(context.Background(), keyOf(ns, k), &l)).To(Succeed())
				g.Expect(l.Status.LastClickTime).NotTo(BeNil(), "lastClickTime replayed")
				g.Expect(l.Status.LastClickTime.Time).To(BeTemporally("~", time.Now(), time.Minute))
			}
		})
	}
}

// TestCorruptSpool: a spool that does not parse is moved aside and the
// server starts and counts as usual.
func TestCorruptSpool(t *testing.T) {
	g := NewWithT(t)
	ns, corruptHost := namespaceWithDomain(t, "corrupt.test")
	createLink(t, ns, "l", corruptHost, "k", "https://dest.example/", nil)
	for _, content := range []string{`{"version":1,"links":[{"uid":`, `{"version":99,"links":[]}`} {
		path := filepath.Join(t.TempDir(), "clicks.spool")
		g.Expect(os.WriteFile(path, []byte(content), 0o600)).To(Succeed())
		o := testOptions()
		o.ClickSpool = path
		ts := startServer(t, o)
		g.Expect(os.ReadFile(path + ".corrupt")).To(Equal([]byte(content)))
		_, err := os.Stat(path)
		g.Expect(err).To(MatchError(os.ErrNotExist))
		before := clicksOf(t, ns, "l")
		g.Eventually(func() int { return do(t, "GET", ts.base, corruptHost, "/k", nil).status }, 30*time.Second).Should(Equal(http.StatusFound))
		g.Eventually(func() int64 { return clicksOf(t, ns, "l") }, 30*time.Second).Should(Equal(before + 1))
		ts.stop()
		_, err = os.Stat(path)
		g.Expect(err).To(MatchError(os.ErrNotExist), "nothing left to spool")
	}
}

// TestSpoolInvalidEntry: a spool with invalid entries among valid ones
// replays the valid ones, and the file is kept aside whole, next to an
// older .corrupt file, which stays as it was.
func TestSpoolInvalidEntry(t *testing.T) {
	g := NewWithT(t)
	ns, _ := twoLinks(t, "invalidentry.test")
	want := map[string]int64{"k1": 5, "k2": 3}
	var entries [][]byte
	for _, k := range []string{"k1", "k2"} {
		var l kurzv1alpha1.Link
		g.Expect(k8s.Get(context.Background(), keyOf(ns, k), &l)).To(Succeed())
		b, err := json.Marshal(spoolLink{UID: l.UID, Namespace: ns, Name: k, Clicks: want[k], Last: time.Now().UnixNano()})
		g.Expect(err).NotTo(HaveOccurred())
		entries = append(entries, b)
	}
	// Between them: an entry without a uid, one with a count of the wrong
	// type, and a second entry of k1.
	entries = slices.Insert(entries, 1,
		[]byte(`{"namespace":"x","name":"y","clicks":4}`),
		[]byte(`{"uid":"u","namespace":"x","name":"y","clicks":"many"}`),
		entries[0])
	content := []byte(`{"version":1,"written":"2026-01-01T00:00:00Z","links":[` + string(bytes.Join(entries, []byte(","))) + `]}`)
	path := filepath.Join(t.TempDir(), "clicks.spool")
	g.Expect(os.WriteFile(path, content, 0o600)).To(Succeed())
	g.Expect(os.WriteFile(path+".corrupt", []byte("an older one"), 0o600)).To(Succeed())

	o := testOptions()
	o.ClickSpool = path
	startServer(t, o)
	g.Eventually(twoLinksClicks(t, ns), 30*time.Second).Should(Equal([]int64{5, 3}), "the valid entries replayed")
	g.Eventually(func() error { _, err := os.Stat(path); return err }, 30*time.Second).Should(MatchError(os.ErrNotExist))
	g.Expect(os.ReadFile(path+".corrupt")).To(Equal([]byte("an older one")), "an older copy is not overwritten")
	g.Expect(os.ReadFile(path+".corrupt.1")).To(Equal(content), "the file is kept aside whole")
	g.Consistently(twoLinksClicks(t, ns), time.Second).Should(Equal([]int64{5, 3}))
}
