package clicks

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
	"github.com/kurz-dev/kurz/internal/testenv"
	"github.com/kurz-dev/kurz/internal/testenv/apiproxy"
)

// TestSpoolReplay stops a replica while the API server does not answer: its
// clicks go to the spool, and the next start writes them, exactly once,
// whether the unanswered patch among them is applied before the replay,
// after it, or never.
func TestSpoolReplay(t *testing.T) {
	testenv.Need(t)
	for _, tt := range []struct {
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
			k1, k2 := newLink(t, "replay"), newLink(t, "replay")
			p := apiproxy.New(t, cfg)
			o := testOptions()
			o.FlushInterval = time.Hour // only the final flush writes
			o.Spool = filepath.Join(t.TempDir(), "clicks.spool")
			a := start(t, o, p)
			a.ix.click(k1, 5)
			a.ix.click(k2, 3)

			p.SetMode(tt.mode)
			a.stop()
			sf := readSpool(t, o.Spool)
			g.Expect(sf).NotTo(BeNil(), "spool written")
			g.Expect(sf.Links).To(HaveLen(2))
			g.Expect(sf.total()).To(Equal(int64(8)))
			// The first patch got no answer; the flush stopped there.
			g.Expect(sf.Links).To(ContainElement(HaveField("Unsure", Not(BeNil()))))
			g.Expect(sf.Links).To(ContainElement(HaveField("Unsure", BeNil())))
			g.Expect(storedOf(t, k1, k2)()).To(Equal([]int64{0, 0}))

			p.SetMode(apiproxy.Pass)
			if tt.releaseBefore {
				g.Expect(p.Release(t)).To(Equal([]int{http.StatusOK}))
				g.Expect(stored(t, k1) + stored(t, k2)).To(BeNumerically(">", 0))
			}
			o.FlushInterval = 200 * time.Millisecond
			start(t, o, nil) // replays
			g.Eventually(storedOf(t, k1, k2), 30*time.Second).Should(Equal([]int64{5, 3}))
			g.Eventually(func() *spoolFile { return readSpool(t, o.Spool) }, 30*time.Second).Should(BeNil())
			if tt.mode == apiproxy.Hold && !tt.releaseBefore {
				g.Expect(p.Release(t)).To(Equal([]int{http.StatusConflict}))
			}
			g.Consistently(storedOf(t, k1, k2), time.Second).Should(Equal([]int64{5, 3}))
			for _, l := range []Link{k1, k2} {
				var o kurzv1alpha1.Link
				g.Expect(k8s.Get(context.Background(), l.key(), &o)).To(Succeed())
				g.Expect(o.Status.LastClickTime).NotTo(BeNil(), "lastClickTime replayed")
				g.Expect(o.Status.LastClickTime.Time).To(BeTemporally("~", time.Now(), time.Minute))
			}
		})
	}
}

// TestCorruptSpool: a spool that does not parse is moved aside and the
// Writer starts and counts as usual.
func TestCorruptSpool(t *testing.T) {
	testenv.Need(t)
	g := NewWithT(t)
	l := newLink(t, "corrupt")
	for _, content := range []string{`{"version":1,"links":[{"uid":`, `{"version":99,"links":[]}`} {
		path := filepath.Join(t.TempDir(), "clicks.spool")
		g.Expect(os.WriteFile(path, []byte(content), 0o600)).To(Succeed())
		o := testOptions()
		o.Spool = path
		r := start(t, o, nil)
		g.Expect(os.ReadFile(path + ".corrupt")).To(Equal([]byte(content)))
		g.Expect(readSpool(t, path)).To(BeNil())
		before := stored(t, l)
		r.ix.click(l, 1)
		g.Eventually(func() int64 { return stored(t, l) }, 30*time.Second).Should(Equal(before + 1))
		r.stop()
		g.Expect(readSpool(t, path)).To(BeNil(), "nothing left to spool")
	}
}

// TestSpoolInvalidEntry: a spool with invalid entries among valid ones
// replays the valid ones, and the file is kept aside whole, next to an
// older .corrupt file, which stays as it was.
func TestSpoolInvalidEntry(t *testing.T) {
	testenv.Need(t)
	g := NewWithT(t)
	k1, k2 := newLink(t, "invalid"), newLink(t, "invalid")
	var entries [][]byte
	for l, n := range map[Link]int64{k1: 5, k2: 3} {
		b, err := json.Marshal(spoolLink{UID: l.UID, Namespace: l.Namespace, Name: l.Name, Clicks: n, Last: time.Now().UnixNano()})
		g.Expect(err).NotTo(HaveOccurred())
		entries = append(entries, b)
	}
	// Between them: an entry without a uid, one with a count of the wrong
	// type, and a second entry of one of them.
	entries = slices.Insert(entries, 1,
		[]byte(`{"namespace":"x","name":"y","clicks":4}`),
		[]byte(`{"uid":"u","namespace":"x","name":"y","clicks":"many"}`),
		entries[0])
	content := []byte(`{"version":1,"written":"2026-01-01T00:00:00Z","links":[` + string(bytes.Join(entries, []byte(","))) + `]}`)
	path := filepath.Join(t.TempDir(), "clicks.spool")
	g.Expect(os.WriteFile(path, content, 0o600)).To(Succeed())
	g.Expect(os.WriteFile(path+".corrupt", []byte("an older one"), 0o600)).To(Succeed())

	o := testOptions()
	o.Spool = path
	start(t, o, nil)
	g.Eventually(storedOf(t, k1, k2), 30*time.Second).Should(Equal([]int64{5, 3}), "the valid entries replayed")
	g.Eventually(func() *spoolFile { return readSpool(t, path) }, 30*time.Second).Should(BeNil())
	g.Expect(os.ReadFile(path+".corrupt")).To(Equal([]byte("an older one")), "an older copy is not overwritten")
	g.Expect(os.ReadFile(path+".corrupt.1")).To(Equal(content), "the file is kept aside whole")
	g.Consistently(storedOf(t, k1, k2), time.Second).Should(Equal([]int64{5, 3}))
}
