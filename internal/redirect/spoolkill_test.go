package redirect

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

	"github.com/kurz-dev/kurz/internal/testenv/apiproxy"
)

// These tests simulate SIGKILL honestly without a second process: a
// SIGKILL leaves the spool file as it is at that instant, so the test copies
// it, then stops the old server while its API proxy refuses every request
// (its shutdown can write nothing to the API server), and puts the copy back
// in place of whatever that shutdown wrote. The next server replays the
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

// kill abandons ts as SIGKILL would at this instant: it returns the spool
// file's content now, and stops ts with its proxy p down, then restores the
// content.
func kill(t *testing.T, ts *testServer, p *apiproxy.Proxy, path string) []byte {
	t.Helper()
	g := NewWithT(t)
	p.SetMode(apiproxy.Down)
	b, err := os.ReadFile(path)
	g.Expect(err).NotTo(HaveOccurred(), "spool on disk at the kill")
	ts.stop()
	g.Expect(os.WriteFile(path, b, 0o600)).To(Succeed())
	return b
}

// replaysOnce starts a server with o and checks that it writes the clicks
// of the spool (5 on twoLinks' k1, 3 on k2) once and removes the spool.
func replaysOnce(t *testing.T, o Options, ns string) {
	t.Helper()
	g := NewWithT(t)
	startServer(t, o)
	g.Eventually(twoLinksClicks(t, ns), 30*time.Second).Should(Equal([]int64{5, 3}))
	g.Eventually(func() *spoolFile { return readSpool(t, o.ClickSpool) }, 30*time.Second).Should(BeNil())
	g.Consistently(twoLinksClicks(t, ns), time.Second).Should(Equal([]int64{5, 3}))
}

// TestSpoolSIGKILLDuringOutage: while the API server is unreachable, the
// first flush round that fails writes the spool, so a SIGKILL loses nothing
// counted before that round; the next start writes every click once.
func TestSpoolSIGKILLDuringOutage(t *testing.T) {
	g := NewWithT(t)
	ns, host := twoLinks(t, "killoutage.test")
	p := apiproxy.New(t, cfg)
	path := filepath.Join(t.TempDir(), "clicks.spool")
	o := testOptions()
	o.ClickSpool = path
	o.ShutdownTimeout = 3 * time.Second
	a := startServerOn(t, p.Config(), o)
	for _, k := range []string{"k1", "k2"} {
		g.Eventually(func() int { return do(t, "HEAD", a.base, host, "/"+k, nil).status }, 30*time.Second).Should(Equal(http.StatusFound))
	}
	p.SetMode(apiproxy.Down)
	hammer(t, a.base, host, "/k1", 5)
	hammer(t, a.base, host, "/k2", 3)
	g.Eventually(func() int64 {
		if sf := readSpool(t, path); sf != nil {
			return sf.total()
		}
		return -1
	}, 30*time.Second).Should(Equal(int64(8)), "the outage rounds spool the clicks")

	kill(t, a, p, path)
	g.Expect(clicksOf(t, ns, "k1") + clicksOf(t, ns, "k2")).To(BeZero())

	replaysOnce(t, o, ns)
}

// TestSpoolWriteAhead: a replaying server's patch is applied by the API
// server but its answer is lost, and the server is killed. The spool
// recorded the patch (marker and precondition) before it was sent, so the
// next start finds the marker and does not write those clicks again.
func TestSpoolWriteAhead(t *testing.T) {
	g := NewWithT(t)
	ns, host := namespaceWithDomain(t, "writeahead.test")
	want := map[string]int64{"k1": 5, "k2": 3}
	sf := spoolFile{Version: spoolVersion, Written: time.Now().UTC()}
	for _, k := range []string{"k1", "k2"} {
		l := createLink(t, ns, k, host, k, "https://dest.example/", nil)
		sf.Links = append(sf.Links, spoolLink{UID: l.UID, Namespace: ns, Name: k, Clicks: want[k], Last: time.Now().UnixNano()})
	}
	path := filepath.Join(t.TempDir(), "clicks.spool")
	b, err := json.Marshal(&sf)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(os.WriteFile(path, b, 0o600)).To(Succeed())

	p := apiproxy.New(t, cfg)
	p.SetMode(apiproxy.Hold) // reads pass, patches get no answer
	o := testOptions()
	o.ClickSpool = path
	o.ShutdownTimeout = 3 * time.Second
	a := startServerOn(t, p.Config(), o)
	g.Eventually(p.Parked, 30*time.Second).Should(BeNumerically(">=", 1))

	killed := kill(t, a, p, path)
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

	// The frozen API server applies what it got now; the killed server
	// never heard of it.
	codes := p.Release(t)
	g.Expect(codes).To(ContainElement(http.StatusOK))
	g.Expect(codes).To(HaveEach(BeElementOf(http.StatusOK, http.StatusConflict)), "resends of one patch apply once")
	applied := clicksOf(t, ns, "k1") + clicksOf(t, ns, "k2")
	g.Expect(applied).To(BeElementOf(int64(5), int64(3), int64(8)))

	replaysOnce(t, o, ns)
}

// TestNoSpoolInNormalOperation: with the API server answering, the spool's
// directory stays empty: normal flushes write nothing to disk.
func TestNoSpoolInNormalOperation(t *testing.T) {
	g := NewWithT(t)
	ns, host := namespaceWithDomain(t, "nospool.test")
	createLink(t, ns, "l", host, "k", "https://dest.example/", nil)
	dir := t.TempDir()
	o := testOptions()
	o.ClickSpool = filepath.Join(dir, "clicks.spool")
	ts := startServer(t, o)
	empty := func() []string {
		entries, err := os.ReadDir(dir)
		g.Expect(err).NotTo(HaveOccurred())
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		return names
	}
	g.Eventually(func() int { return do(t, "HEAD", ts.base, host, "/k", nil).status }, 30*time.Second).Should(Equal(http.StatusFound))
	for range 3 {
		hammer(t, ts.base, host, "/k", 2)
		g.Expect(empty()).To(BeEmpty())
	}
	g.Eventually(func() int64 { return clicksOf(t, ns, "l") }, 30*time.Second).Should(Equal(int64(6)))
	g.Consistently(empty, time.Second, 50*time.Millisecond).Should(BeEmpty())
	ts.stop()
	g.Expect(empty()).To(BeEmpty())
}
