package clicks

import (
	"cmp"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/go-logr/logr"
	"golang.org/x/time/rate"
	"k8s.io/apimachinery/pkg/api/resource"
)

// The spool's bound. Its volume (an emptyDir with a sizeLimit) must never
// fill: past its sizeLimit the kubelet evicts the pod, and the spool goes
// with it, every pending click included. The volume holds the spool, for a
// moment two (writeFileAtomic writes the new one before the rename removes
// the old one), and the .corrupt copies kept beside it. So:
//
//	cap = (limit - corrupt copies - spoolSlack) / 2
//
// spoolSlack covers the directory itself and the rounding of each file up
// to whole blocks (4 KiB on ext4 and xfs: 3 blocks), with a block to spare.
//
// What does not fit is dropped, counted (kurz_redirect_clicks_dropped_total
// {reason="spool_full"}) and logged. Unsure writes go first: each may have
// been applied, and only settling it tells, so giving one up could count
// clicks that were stored as lost. Then the Links with the most pending
// clicks: entries cost about the same whatever their count (a uid, a
// namespace, a name), so this keeps the most clicks the spool can hold, and
// what is dropped is the long tail of Links clicked once or twice. The
// counts may take at most countShare of the cap: the rest is room for the
// write-ahead patches (several times a count's size) that write them back
// once kube-apiserver answers, which would otherwise find no room.
const (
	spoolSlack = 16 << 10
	// minSpoolSizeLimit leaves a cap of 24 KiB, whose quarter holds the
	// largest write-ahead entry (16 writers of 109 characters, a name of
	// 253: 3.7 KB; see TestSpoolBytesPerLink).
	minSpoolSizeLimit = 64 << 10
	countShareNum     = 3 // counts take at most 3/4 of the cap
	countShareDen     = 4
)

// spoolCap is the largest spool file a volume of limit bytes holds, with
// corrupt bytes of copies beside it.
func spoolCap(limit, corrupt int64) int64 {
	return max((limit-corrupt-spoolSlack)/2, 0)
}

func newSpool(path string, limit int64) *spool {
	return &spool{path: path, limit: limit, cap: spoolCap(limit, 0), drops: rate.Sometimes{Interval: time.Minute}}
}

// measure sets the cap from the volume's limit and what the directory
// holds besides the spool: temporary files a killed process left (removed:
// a temporary file was never renamed, so it is no spool) and .corrupt
// copies (kept: they take room).
func (s *spool) measure(log logr.Logger) {
	dir, base := filepath.Dir(s.path), filepath.Base(s.path)
	entries, err := os.ReadDir(dir)
	if err != nil {
		log.Error(err, "cannot read the click spool's directory; its cap ignores what it holds", "path", s.path)
	}
	var corrupt int64
	for _, e := range entries {
		name := e.Name()
		switch {
		case strings.HasPrefix(name, base+".tmp-"):
			if err := os.Remove(filepath.Join(dir, name)); err != nil {
				log.Error(err, "cannot remove a temporary click spool file", "path", filepath.Join(dir, name))
			}
		case strings.HasPrefix(name, base+".corrupt"):
			if info, err := e.Info(); err == nil {
				corrupt += roundBlock(info.Size())
			}
		}
	}
	s.cap = spoolCap(s.limit, corrupt)
	if corrupt > 0 {
		log.Info("corrupt copies of the click spool take room in its volume: the spool holds less; remove them once inspected",
			"path", s.path, "corruptBytes", corrupt, "capBytes", s.cap)
	}
}

// writeAheadRoom is what the write-ahead entries (unsure writes) may take:
// what the counts' share leaves of the cap, less the file's head and tail.
func (s *spool) writeAheadRoom() int64 {
	const headAndTail = 128 // {"version":1,"written":"<RFC 3339, ns>","links":[ ... ]}
	return s.cap - s.cap/countShareDen*countShareNum - headAndTail
}

// roundBlock is n rounded up to whole 4 KiB blocks.
func roundBlock(n int64) int64 { return (n + 4095) &^ 4095 }

// spoolEntry is one Link of a spool being written.
type spoolEntry struct {
	link spoolLink
	// c and n are the counter the entry's count was read from and that
	// count (peeked: still in the counter), to give it up.
	c    *Counter
	n    int64
	json []byte
}

// clicks is what the entry holds.
func (e *spoolEntry) clicks() int64 {
	n := e.link.Clicks
	if e.link.Unsure != nil {
		n += e.link.Unsure.Delta
	}
	return n
}

// entrySize is what l adds to a spool file: its JSON and a comma.
func entrySize(l *spoolLink) int64 {
	b, err := json.Marshal(l)
	if err != nil {
		panic(err) // plain structs: cannot fail
	}
	return int64(len(b)) + 1
}

// fit decides which entries a spool file of at most s.cap bytes keeps,
// given the bytes of the file without any (base); see the order above.
func (s *spool) fit(entries []*spoolEntry, base int64) (keep, drop []*spoolEntry) {
	byValue := slices.Clone(entries)
	slices.SortStableFunc(byValue, func(a, b *spoolEntry) int {
		if ua, ub := a.link.Unsure != nil, b.link.Unsure != nil; ua != ub {
			if ua {
				return -1
			}
			return 1
		}
		return cmp.Compare(b.clicks(), a.clicks())
	})
	size, counts := base, int64(0)
	kept := make(map[*spoolEntry]bool, len(entries))
	for _, e := range byValue {
		add := int64(len(e.json)) + 1
		count := e.link.Unsure == nil
		if size+add > s.cap || (count && counts+add > s.cap/countShareDen*countShareNum) {
			drop = append(drop, e)
			continue
		}
		size += add
		if count {
			counts += add
		}
		kept[e] = true
	}
	for _, e := range entries { // in their order
		if kept[e] {
			keep = append(keep, e)
		}
	}
	return keep, drop
}

// giveUp drops entries that did not fit: peeked counts leave their
// counters, unsure writes leave w.unsure (never sent again, never settled).
// Each is counted; the log line is rate-limited (see noteDropped).
func (s *spool) giveUp(w *Writer, drop []*spoolEntry, final bool) {
	var links int
	var clicks int64
	for _, e := range drop {
		if e.c != nil && e.n != 0 {
			e.c.n.Add(-e.n)
		}
		if u := e.link.Unsure; u != nil && w.unsure[e.link.UID] == u {
			delete(w.unsure, e.link.UID)
			s.log.Error(nil, "click spool full: giving up an unanswered click write; its clicks are counted as dropped, though it may have been applied",
				"link", e.link.Namespace+"/"+e.link.Name, "clicks", u.Delta)
		}
		links++
		clicks += e.clicks()
	}
	w.dropped(reasonSpoolFull, clicks)
	s.noteDropped(links, clicks, final)
}

// noteDropped logs clicks dropped for a full spool: at once the first
// time, then at most once a minute with the totals since the last line, and
// whatever is left untold when final (the process stops).
func (s *spool) noteDropped(links int, clicks int64, final bool) {
	s.dropLinks += links
	s.dropClicks += clicks
	if s.dropLinks == 0 {
		return
	}
	line := func() {
		s.log.Error(nil, "click spool full: the Links with the fewest pending clicks are dropped (kurz_redirect_clicks_dropped_total{reason=\"spool_full\"})",
			"path", s.path, "links", s.dropLinks, "clicks", s.dropClicks,
			"capBytes", s.cap, "sizeLimit", resource.NewQuantity(s.limit, resource.BinarySI).String())
		s.dropLinks, s.dropClicks = 0, 0
	}
	if final {
		line()
		return
	}
	s.drops.Do(line)
}
