package clicks

import (
	"encoding/json"
	"errors"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	. "github.com/onsi/gomega"

	"github.com/kurz-dev/kurz/internal/testenv"
	"github.com/kurz-dev/kurz/internal/testenv/apiproxy"
)

// These tests simulate SIGKILL honestly without a second process: a
// SIGKILL leaves the spool file as it is at that instant, so the test copies
// it, then stops the old replica while its API proxy refuses every request
// (its Finish can write nothing to the API server), and puts the copy back
// in place of whatever that Finish wrote. The next replica replays the
// copy, as a restarted pod would.

// readSpool returns the spool at path, or nil if there is none.
func readSpool(t *testing.T, path string) *spoolFile {
	t.Helper()
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	NewWithT(t).Expect(err).NotTo(HaveOccurred())
	var sf spoolFile
	NewWithT(t).Expect(json.Unmarshal(b, &sf)).To(Succeed())
	return &sf
}

// total is every click the spool holds, counts and unsure writes.
func (sf *spoolFile) total() int64 {
	var n int64
	for _, l := range sf.Links {
		n += l.Clicks
		if l.Unsure != nil {
			n += l.Unsure.Delta
		}
	}
	return n
}

// kill abandons r as SIGKILL would at this instant: it returns the spool
// file's content now, and stops r with its proxy p down, then restores the
// content.
func kill(t *testing.T, r *replica, p *apiproxy.Proxy, path string) []byte {
	t.Helper()
	g := NewWithT(t)
	p.SetMode(apiproxy.Down)
	b, err := os.ReadFile(path)
	g.Expect(err).NotTo(HaveOccurred(), "spool on disk at the kill")
	r.stop()
	g.Expect(os.WriteFile(path, b, 0o600)).To(Succeed())
	return b
}

// replaysOnce starts a replica with o and checks that it writes the clicks
// of the spool (5 on k1, 3 on k2) once and removes the spool.
func replaysOnce(t *testing.T, o Options, k1, k2 Link) {
	t.Helper()
	g := NewWithT(t)
	start(t, o, nil)
	g.Eventually(storedOf(t, k1, k2), 30*time.Second).Should(Equal([]int64{5, 3}))
	g.Eventually(func() *spoolFile { return readSpool(t, o.Spool) }, 30*time.Second).Should(BeNil())
	g.Consistently(storedOf(t, k1, k2), time.Second).Should(Equal([]int64{5, 3}))
}

// TestSpoolSIGKILLDuringOutage: while the API server is unreachable, the
// first flush round that fails writes the spool, so a SIGKILL loses nothing
// counted before that round; the next start writes every click once.
func TestSpoolSIGKILLDuringOutage(t *testing.T) {
	testenv.Need(t)
	g := NewWithT(t)
	k1, k2 := newLink(t, "killoutage"), newLink(t, "killoutage")
	p := apiproxy.New(t, cfg)
	o := testOptions()
	o.Spool = filepath.Join(t.TempDir(), "clicks.spool")
	a := start(t, o, p)
	p.SetMode(apiproxy.Down)
	a.ix.click(k1, 5)
	a.ix.click(k2, 3)
	g.Eventually(func() int64 {
		if sf := readSpool(t, o.Spool); sf != nil {
			return sf.total()
		}
		return -1
	}, 30*time.Second).Should(Equal(int64(8)), "the outage rounds spool the clicks")

	kill(t, a, p, o.Spool)
	g.Expect(storedOf(t, k1, k2)()).To(Equal([]int64{0, 0}))

	replaysOnce(t, o, k1, k2)
}

// TestSpoolWriteAhead: a replaying Writer's patch is applied by the API
// server but its answer is lost, and the process is killed. The spool
// recorded the patch (marker and precondition) before it was sent, so the
// next start finds the marker and does not write those clicks again.
func TestSpoolWriteAhead(t *testing.T) {
	testenv.Need(t)
	g := NewWithT(t)
	k1, k2 := newLink(t, "writeahead"), newLink(t, "writeahead")
	want := map[string]int64{k1.Name: 5, k2.Name: 3}
	sf := spoolFile{Version: spoolVersion, Written: time.Now().UTC()}
	for _, l := range []Link{k1, k2} {
		sf.Links = append(sf.Links, spoolLink{UID: l.UID, Namespace: l.Namespace, Name: l.Name, Clicks: want[l.Name], Last: time.Now().UnixNano()})
	}
	o := testOptions()
	o.Spool = filepath.Join(t.TempDir(), "clicks.spool")
	b, err := json.Marshal(&sf)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(os.WriteFile(o.Spool, b, 0o600)).To(Succeed())

	p := apiproxy.New(t, cfg)
	p.SetMode(apiproxy.Hold) // reads pass, patches get no answer
	a := start(t, o, p)
	g.Eventually(p.Parked, 30*time.Second).Should(BeNumerically(">=", 1))

	killed := kill(t, a, p, o.Spool)
	// Every patch of the round was spooled as an unsure write before the
	// first was sent.
	var at spoolFile
	g.Expect(json.Unmarshal(killed, &at)).To(Succeed())
	g.Expect(at.Links).To(HaveLen(2))
	for _, l := range at.Links {
		g.Expect(l.Unsure).NotTo(BeNil(), "patch of %s spooled ahead", l.Name)
		g.Expect(l.Unsure.Delta).To(Equal(want[l.Name]))
		g.Expect(l.Clicks).To(BeZero(), "its clicks are in the patch, not also as counts")
	}

	// The frozen API server applies what it got now; the killed process
	// never heard of it.
	codes := p.Release(t)
	g.Expect(codes).To(ContainElement(http.StatusOK))
	g.Expect(codes).To(HaveEach(BeElementOf(http.StatusOK, http.StatusConflict)), "resends of one patch apply once")
	applied := stored(t, k1) + stored(t, k2)
	g.Expect(applied).To(BeElementOf(int64(5), int64(3), int64(8)))

	replaysOnce(t, o, k1, k2)
}

// TestNoSpoolInNormalOperation: with the API server answering, the spool's
// directory stays empty: normal flushes write nothing to disk.
func TestNoSpoolInNormalOperation(t *testing.T) {
	testenv.Need(t)
	g := NewWithT(t)
	l := newLink(t, "nospool")
	dir := t.TempDir()
	o := testOptions()
	o.Spool = filepath.Join(dir, "clicks.spool")
	r := start(t, o, nil)
	empty := func() []string {
		entries, err := os.ReadDir(dir)
		g.Expect(err).NotTo(HaveOccurred())
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		return names
	}
	for range 3 {
		r.ix.click(l, 2)
		g.Expect(empty()).To(BeEmpty())
	}
	g.Eventually(func() int64 { return stored(t, l) }, 30*time.Second).Should(Equal(int64(6)))
	g.Consistently(empty, time.Second, 50*time.Millisecond).Should(BeEmpty())
	r.stop()
	g.Expect(empty()).To(BeEmpty())
}
