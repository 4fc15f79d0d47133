package clicks

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/go-logr/logr"
	"golang.org/x/time/rate"
	"k8s.io/apimachinery/pkg/types"
)

// spoolVersion is the format of the spool file; another one is corrupt.
const spoolVersion = 1

// spoolFile is what a replica leaves for the next start when it is stopped
// (or killed) while clicks are pending: per Link, the clicks not written
// yet and its unanswered write.
type spoolFile struct {
	Version int         `json:"version"`
	Written time.Time   `json:"written"`
	Links   []spoolLink `json:"links"`
}

type spoolLink struct {
	UID       types.UID `json:"uid"`
	Namespace string    `json:"namespace"`
	Name      string    `json:"name"`
	// Clicks and Last are counted clicks never sent, and the newest one's
	// time (unix ns).
	Clicks int64 `json:"clicks,omitempty"`
	Last   int64 `json:"last,omitempty"`
	// Unsure is the write whose answer never came, settled first on replay
	// under the writer id it carries.
	Unsure *unsureWrite `json:"unsure,omitempty"`
}

// spool is the --click-spool file of a Writer.
type spool struct {
	path string
	// onDisk: the file exists (replayed, or written by a round that left
	// something unwritten). While it does, every flush round writes ahead
	// (see flushDurable) and rewrites it; a round that writes everything
	// removes it.
	onDisk bool
	// limit is the size limit of the spool's volume, cap the largest file
	// the spool may be (see spoolCap, measure).
	limit, cap int64
	log        logr.Logger
	// drops rate-limits the log line of the clicks dropped for a full spool;
	// dropLinks and dropClicks are those not logged yet.
	drops      rate.Sometimes
	dropLinks  int
	dropClicks int64
}

// load reads the spool, if any, into q's counters (found with counterFor)
// and the Writer's unsure writes. A file that cannot be read as a spool
// (not JSON, another version) is kept aside whole (see keepCorrupt),
// logged, and otherwise ignored. A file with some invalid entries is kept
// aside whole too, and its valid entries are replayed: one bad entry must
// not cost the clicks of the others.
func (s *spool) load(log logr.Logger, w *Writer) error {
	s.log = log
	b, err := os.ReadFile(s.path)
	if errors.Is(err, fs.ErrNotExist) {
		s.measure(log)
		return nil
	}
	if err != nil {
		return fmt.Errorf("read click spool: %w", err)
	}
	sf, invalid, err := parseSpool(b)
	if err != nil {
		aside, kerr := s.keepCorrupt(b)
		if kerr == nil {
			kerr = s.remove()
		}
		if kerr != nil {
			return fmt.Errorf("click spool %s is corrupt (%v) and cannot be moved aside: %w", s.path, err, kerr)
		}
		log.Error(err, "click spool is corrupt: moved aside, its clicks are not replayed", "path", aside)
		s.measure(log)
		return nil
	}
	if invalid > 0 {
		aside, kerr := s.keepCorrupt(b)
		if kerr != nil {
			return fmt.Errorf("click spool %s has %d invalid entries and cannot be copied aside: %w", s.path, invalid, kerr)
		}
		log.Error(nil, "click spool has invalid entries: the file is copied aside, its valid entries are replayed", "path", aside, "invalid", invalid, "valid", len(sf.Links))
	}
	s.measure(log)
	var clicks int64
	for _, l := range sf.Links {
		c := w.counter(Link{UID: l.UID, Namespace: l.Namespace, Name: l.Name})
		if l.Unsure != nil {
			w.unsure[l.UID] = l.Unsure
			clicks += l.Unsure.Delta
		}
		clicks += l.Clicks
		c.requeue(l.Clicks, l.Last) // queued even when 0, to settle
	}
	s.onDisk = len(sf.Links) > 0
	log.Info("replaying the click spool", "path", s.path, "links", len(sf.Links), "clicks", clicks, "written", sf.Written)
	if !s.onDisk {
		return s.remove()
	}
	if invalid > 0 {
		// Only the valid entries from now on: the copy aside has the rest.
		if _, _, err := s.checkpoint(w); err != nil {
			return fmt.Errorf("rewrite the click spool without its invalid entries: %w", err)
		}
	}
	return nil
}

// parseSpool reads a spool file: its valid entries, and how many it had
// that are not (incomplete, of the wrong types, a second one of a Link). An
// error means the file as a whole is not a spool.
func parseSpool(b []byte) (sf spoolFile, invalid int, err error) {
	var raw struct {
		Version int               `json:"version"`
		Written time.Time         `json:"written"`
		Links   []json.RawMessage `json:"links"`
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		return sf, 0, err
	}
	if raw.Version != spoolVersion {
		return sf, 0, fmt.Errorf("unknown version %d", raw.Version)
	}
	sf.Version, sf.Written = raw.Version, raw.Written
	seen := make(map[types.UID]bool, len(raw.Links))
	for _, r := range raw.Links {
		var l spoolLink
		if json.Unmarshal(r, &l) != nil || !l.valid() || seen[l.UID] {
			invalid++
			continue
		}
		seen[l.UID] = true
		sf.Links = append(sf.Links, l)
	}
	return sf, invalid, nil
}

func (l *spoolLink) valid() bool {
	return l.UID != "" && l.Namespace != "" && l.Name != "" && l.Clicks >= 0 &&
		(l.Unsure == nil || (l.Unsure.Writer.ID != "" && l.Unsure.ResourceVersion != "" && len(l.Unsure.Patch) > 0 && l.Unsure.Delta >= 0))
}

// keepCorrupt writes b, a spool that did not load whole, next to the spool
// as <path>.corrupt, or <path>.corrupt.N for the first N free: an earlier
// one is never overwritten. The file and its directory entry are synced.
func (s *spool) keepCorrupt(b []byte) (string, error) {
	for n := range maxCorrupt {
		name := s.path + ".corrupt"
		if n > 0 {
			name += "." + strconv.Itoa(n)
		}
		fh, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if err != nil {
			return "", err
		}
		_, err = fh.Write(b)
		if err == nil {
			err = fh.Sync()
		}
		if cerr := fh.Close(); err == nil {
			err = cerr
		}
		if err == nil {
			err = syncDir(filepath.Dir(s.path))
		}
		if err != nil {
			_ = os.Remove(name) // half a copy is no copy
			return "", err
		}
		return name, nil
	}
	return "", fmt.Errorf("%d corrupt copies of the click spool are kept already: remove some", maxCorrupt)
}

// maxCorrupt bounds the names keepCorrupt tries.
const maxCorrupt = 1000

// written is called after a flush round that left nothing behind: what the
// spool holds is all stored (or, for clicks counted during the round, held
// in memory as in normal operation).
func (s *spool) written(log logr.Logger) {
	if !s.onDisk {
		return
	}
	if err := s.remove(); err != nil {
		// The file still says what it said: its unsure writes settle on
		// replay, but counts it holds that were written since would count
		// twice. Stay in write-ahead mode: the next round rewrites it.
		log.Error(err, "remove the click spool; it stays and is rewritten by the next flush", "path", s.path)
		return
	}
	log.Info("click spool written and removed", "path", s.path)
}

func (s *spool) remove() error {
	if err := os.Remove(s.path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	if err := syncDir(filepath.Dir(s.path)); err != nil {
		return err
	}
	s.onDisk = false
	return nil
}

// checkpoint writes what is pending now, without taking it: the queued
// counters' counts and the unsure writes (the ones about to be sent
// included). A SIGKILL after it leaves this file, and its replay counts
// each click once: a count is either still only in memory (so lost with the
// process, not in the file twice) or in the file as a count or as an unsure
// write, which the replay settles by its marker.
func (s *spool) checkpoint(w *Writer) (links int, clicks int64, err error) {
	return s.write(w, false)
}

// save writes what the final flush left: the queued counters (taken) and
// the unsure writes. Nothing left removes the file. The write is atomic (a
// temporary file, fsynced, renamed over the spool, the directory fsynced):
// a crash leaves the old spool or the new one, never half of one.
func (s *spool) save(w *Writer) (links int, clicks int64, err error) {
	return s.write(w, true)
}

// write writes the pending counts (taken from the queue with take, else
// only read) and the unsure writes, or removes the file if there are none.
func (s *spool) write(w *Writer, take bool) (links int, clicks int64, err error) {
	byUID := map[types.UID]*spoolEntry{}
	var entries []*spoolEntry
	add := func(uid types.UID, ns, name string) *spoolEntry {
		e := byUID[uid]
		if e == nil {
			e = &spoolEntry{link: spoolLink{UID: uid, Namespace: ns, Name: name}}
			byUID[uid] = e
			entries = append(entries, e)
		}
		return e
	}
	var queued []*Counter
	if take {
		queued = w.q.take()
	} else {
		queued = w.q.peek()
	}
	seen := make(map[*Counter]bool, len(queued))
	for _, c := range queued {
		if seen[c] {
			continue // queued twice (a requeue racing a click): count it once
		}
		seen[c] = true
		var n int64
		if take {
			c.queued.Store(false)
			n = c.n.Swap(0)
		} else {
			n = c.n.Load()
		}
		if n == 0 {
			continue
		}
		e := add(c.link.UID, c.link.Namespace, c.link.Name)
		e.link.Clicks += n
		e.link.Last = max(e.link.Last, c.last.Load())
		if !take {
			e.c, e.n = c, e.n+n
		}
	}
	for uid, u := range w.unsure {
		add(uid, u.Namespace, u.Name).link.Unsure = u
	}
	if len(entries) == 0 {
		return 0, 0, s.remove()
	}
	// The file is written as json.Marshal(&spoolFile{...}) would write it,
	// entry by entry, so that each entry's size is known to fit it.
	written, err := json.Marshal(time.Now().UTC())
	if err != nil {
		return 0, 0, err
	}
	head := fmt.Appendf(nil, `{"version":%d,"written":%s,"links":[`, spoolVersion, written)
	const tail = "]}"
	for _, e := range entries {
		if e.json, err = json.Marshal(&e.link); err != nil {
			return 0, 0, err
		}
	}
	keep, drop := s.fit(entries, int64(len(head)+len(tail)))
	b := head
	for i, e := range keep {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, e.json...)
		clicks += e.clicks()
	}
	b = append(b, tail...)
	if len(keep) == 0 {
		err = s.remove()
	} else {
		err = writeFileAtomic(s.path, b)
	}
	if err != nil {
		return 0, 0, err
	}
	s.onDisk = len(keep) > 0
	if len(drop) > 0 {
		s.giveUp(w, drop, take)
	}
	return len(keep), clicks, nil
}

func writeFileAtomic(path string, b []byte) error {
	dir := filepath.Dir(path)
	tmp, err := os.CreateTemp(dir, filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // after the rename: nothing to remove
	if _, err := tmp.Write(b); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return err
	}
	return syncDir(dir)
}

// syncDir makes a rename or removal in dir durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
