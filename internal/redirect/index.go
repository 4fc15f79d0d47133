package redirect

import (
	"strings"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	kurzv1alpha1 "github.com/kurz-dev/kurz/api/v1alpha1"
	"github.com/kurz-dev/kurz/internal/claims"
	"github.com/kurz-dev/kurz/internal/redirect/clicks"
	"github.com/kurz-dev/kurz/internal/visibility"
)

// Index maps host -> key -> Entry for what may serve: a Link whose domain is
// a Domain of its own namespace, that namespace holding the hostname
// (claims.Owner: TXT proof first, then the oldest uncontested claim), and the Link holding its key there (claims.KeyHolder).
//
// Readers (the redirect handler) take a read lock on the served view only.
// Writers (informer event handlers) keep the full picture of every claim
// (which is what lets a loser take over when a winner goes away) under a
// separate lock, and touch the served view only for the host or key that
// changed.
type Index struct {
	mu    sync.RWMutex
	hosts map[string]*servedHost

	wmu           sync.Mutex
	domains       map[types.NamespacedName]*domainRec
	domainsByHost map[string]map[types.NamespacedName]*domainRec
	// links is namespace -> name -> record: a map per namespace, whose
	// entries (a name and a pointer, 24 bytes) are 16 bytes smaller than
	// one map's by namespace and name; about 20 bytes per Link.
	links map[string]map[string]*linkRec
	// linksByHost is host -> key -> the claimants of all namespaces, a
	// list through linkRec.next: nearly every key has one, and a slice
	// per key cost 8 bytes more in the map and an allocation.
	linksByHost map[string]map[string]*linkRec
	// linksTaken and domainsTaken tell the API's writers when the index
	// has their writes (writes.go).
	linksTaken, domainsTaken taken

	// queue is where the click Slots of the Entries queue their Counters.
	queue *clicks.Queue
}

// servedHost is a hostname as served: by which namespace, its fallbacks and
// its keys. Fields change only under Index.mu.
type servedHost struct {
	namespace   string
	notFoundURL string
	expiredURL  string
	keys        map[string]*Entry
}

// objRef is what the index keeps of an object's metadata. Its creation
// time is kept as unix seconds and nanoseconds, not a time.Time: 16 bytes
// less per Link record (96 instead of 112), and claims only compare it.
type objRef struct {
	name, namespace string
	createdSec      int64
	createdNsec     int32
	deleting        bool
}

func refOf(o metav1.Object) objRef {
	t := o.GetCreationTimestamp().Time
	return objRef{name: o.GetName(), namespace: o.GetNamespace(), createdSec: t.Unix(), createdNsec: int32(t.Nanosecond()),
		deleting: o.GetDeletionTimestamp() != nil}
}

// created is the object's creationTimestamp (in UTC).
func (r objRef) created() time.Time { return time.Unix(r.createdSec, int64(r.createdNsec)).UTC() }

// keyClaim is what claims.KeyHolder ranks a Link by.
func (r objRef) keyClaim() claims.KeyClaim {
	return claims.KeyClaim{Namespace: r.namespace, Name: r.name, Created: r.created(), Deleting: r.deleting}
}

type domainRec struct {
	objRef
	// uid tells a Domain deleted and created again under the same name
	// (seen as one update after a watch gap, both at generation 1) from
	// a status write.
	uid                     types.UID
	host                    string
	notFoundURL, expiredURL string
	generation              int64
	// claim is what claims.Owner ranks by (claim time, proof,
	// contested). A claim being recorded or proven is a status-only write
	// that can move the hostname, so it is not skipped.
	claim claims.Claim
}

func sameClaim(a, b claims.Claim) bool {
	return a.Current == b.Current && a.Since.Equal(b.Since) && a.Contested == b.Contested &&
		a.Proof == b.Proof && a.Deleting == b.Deleting
}

// linkRec is a Link's record: 96 bytes. (No generation: a Link's record
// is rebuilt on every write, see UpsertLink.)
type linkRec struct {
	objRef
	host, key string
	entry     *Entry
	// next is the next claimant of the same host and key.
	next *linkRec
}

// NewIndex returns an empty index.
func NewIndex() *Index {
	ix := &Index{
		hosts:         map[string]*servedHost{},
		domains:       map[types.NamespacedName]*domainRec{},
		domainsByHost: map[string]map[types.NamespacedName]*domainRec{},
		links:         map[string]map[string]*linkRec{},
		linksByHost:   map[string]map[string]*linkRec{},
		queue:         clicks.NewQueue(),
	}
	ix.linksTaken.writes = visibility.New(ix.holds(&ix.linksTaken, ix.linkUID))
	ix.domainsTaken.writes = visibility.New(ix.holds(&ix.domainsTaken, ix.domainUID))
	return ix
}

// hit is the result of a lookup, copied out under the read lock.
type hit struct {
	hostFound   bool
	notFoundURL string
	expiredURL  string
	entry       *Entry // nil for an unknown key
}

// lookup finds host and key. host must be normalized; key may be nil.
func (ix *Index) lookup(host, key []byte) hit {
	ix.mu.RLock()
	h := ix.hosts[string(host)]
	if h == nil {
		ix.mu.RUnlock()
		return hit{}
	}
	r := hit{hostFound: true, notFoundURL: h.notFoundURL, expiredURL: h.expiredURL}
	if key != nil {
		r.entry = h.keys[string(key)]
	}
	ix.mu.RUnlock()
	return r
}

// Len returns the number of served links.
func (ix *Index) Len() int {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	n := 0
	for _, h := range ix.hosts {
		n += len(h.keys)
	}
	return n
}

func hostOf(h kurzv1alpha1.Hostname) string {
	return strings.TrimSuffix(strings.ToLower(string(h)), ".")
}

// UpsertLink adds or replaces a Link.
func (ix *Index) UpsertLink(l *kurzv1alpha1.Link) {
	// Deferred in this order, they run the other way round: the record and
	// the served view have the Link, then it counts as taken, then the
	// lock goes, then the waiters look.
	defer ix.linksTaken.writes.Changed()
	ix.wmu.Lock()
	defer ix.wmu.Unlock()
	defer ix.linksTaken.take(l)
	old := ix.links[l.Namespace][l.Name]
	// A status write (clicks, conditions) changes nothing the index holds,
	// but the record is rebuilt all the same: the cache has replaced the
	// object it was built from, and the record would keep that object's
	// strings (URL, key, name, uid) alive beside the new object's, 150
	// bytes per link once every link has been written.
	var slot *clicks.Slot
	if old != nil {
		if old.entry.uid() == l.UID {
			slot = old.entry.slot
		}
		ix.removeLink(old)
	}
	rec := &linkRec{
		objRef: refOf(l),
		host:   hostOf(l.Spec.Domain),
		key:    l.Spec.Key,
	}
	rec.entry = newEntry(l, rec, slot, ix.queue)
	names := ix.links[l.Namespace]
	if names == nil {
		names = map[string]*linkRec{}
		ix.links[l.Namespace] = names
	}
	names[l.Name] = rec
	keys := ix.linksByHost[rec.host]
	if keys == nil {
		keys = map[string]*linkRec{}
		ix.linksByHost[rec.host] = keys
	}
	rec.next = keys[rec.key]
	keys[rec.key] = rec
	if old != nil && (old.host != rec.host || old.key != rec.key) {
		ix.refreshKey(old.host, old.key)
	}
	ix.refreshKey(rec.host, rec.key)
}

// DeleteLink removes a Link.
func (ix *Index) DeleteLink(id types.NamespacedName) {
	defer ix.linksTaken.writes.Changed()
	ix.wmu.Lock()
	defer ix.wmu.Unlock()
	if old := ix.links[id.Namespace][id.Name]; old != nil {
		ix.removeLink(old)
		ix.refreshKey(old.host, old.key)
	}
}

// deleteRec removes the record of id from recs (one of the index's maps),
// under the write lock, with remove; an unknown id changes nothing.
func deleteRec[R any](ix *Index, recs map[types.NamespacedName]*R, id types.NamespacedName, remove func(*R)) {
	ix.wmu.Lock()
	defer ix.wmu.Unlock()
	if old := recs[id]; old != nil {
		remove(old)
	}
}

func (ix *Index) removeLink(rec *linkRec) {
	if names := ix.links[rec.namespace]; names != nil {
		delete(names, rec.name)
		if len(names) == 0 {
			delete(ix.links, rec.namespace)
		}
	}
	keys := ix.linksByHost[rec.host]
	head := keys[rec.key]
	if head == rec {
		head = rec.next
	} else {
		for c := head; c != nil; c = c.next {
			if c.next == rec {
				c.next = rec.next
				break
			}
		}
	}
	rec.next = nil
	if head == nil {
		delete(keys, rec.key)
		if len(keys) == 0 {
			delete(ix.linksByHost, rec.host)
		}
	} else {
		keys[rec.key] = head
	}
}

// UpsertDomain adds or replaces a Domain.
func (ix *Index) UpsertDomain(d *kurzv1alpha1.Domain) {
	defer ix.domainsTaken.writes.Changed() // as in UpsertLink
	ix.wmu.Lock()
	defer ix.wmu.Unlock()
	defer ix.domainsTaken.take(d)
	id := types.NamespacedName{Namespace: d.Namespace, Name: d.Name}
	old := ix.domains[id]
	claim := claims.ClaimOf(d)
	if old != nil && old.uid == d.UID && old.generation == d.Generation &&
		old.deleting == (d.DeletionTimestamp != nil) && sameClaim(old.claim, claim) {
		return // a status write other than the claim: nothing the index holds
	}
	if old != nil {
		ix.removeDomain(id, old)
	}
	rec := &domainRec{objRef: refOf(d), uid: d.UID, host: hostOf(d.Spec.Domain), generation: d.Generation,
		claim: claim}
	if d.Spec.NotFoundURL != nil {
		rec.notFoundURL = string(*d.Spec.NotFoundURL)
	}
	if d.Spec.ExpiredURL != nil {
		rec.expiredURL = string(*d.Spec.ExpiredURL)
	}
	ix.domains[id] = rec
	byHost := ix.domainsByHost[rec.host]
	if byHost == nil {
		byHost = map[types.NamespacedName]*domainRec{}
		ix.domainsByHost[rec.host] = byHost
	}
	byHost[id] = rec
	if old != nil && old.host != rec.host {
		ix.refreshHost(old.host)
	}
	ix.refreshHost(rec.host)
}

// DeleteDomain removes a Domain.
func (ix *Index) DeleteDomain(id types.NamespacedName) {
	defer ix.domainsTaken.writes.Changed()
	deleteRec(ix, ix.domains, id, func(old *domainRec) {
		ix.removeDomain(id, old)
		ix.refreshHost(old.host)
	})
}

func (ix *Index) removeDomain(id types.NamespacedName, rec *domainRec) {
	delete(ix.domains, id)
	if byHost := ix.domainsByHost[rec.host]; byHost != nil {
		delete(byHost, id)
		if len(byHost) == 0 {
			delete(ix.domainsByHost, rec.host)
		}
	}
}

// domainOwner asks claims which Domain holds host.
func (ix *Index) domainOwner(host string) *domainRec {
	byHost := ix.domainsByHost[host]
	if len(byHost) == 0 {
		return nil
	}
	cs := make([]claims.Claim, 0, len(byHost))
	recs := make([]*domainRec, 0, len(byHost))
	for _, r := range byHost {
		cs = append(cs, r.claim)
		recs = append(recs, r)
	}
	if i := claims.Owner(cs); i >= 0 {
		return recs[i]
	}
	return nil
}

// keyWinner asks claims which Link of namespace holds host/key.
func (ix *Index) keyWinner(host, key, namespace string) *Entry {
	head := ix.linksByHost[host][key]
	if head != nil && head.next == nil {
		// One claimant, nearly every key: what claims.KeyWinner decides for
		// one Link, without building stubs for it (this runs for every
		// Link of the initial list).
		if head.namespace == namespace && !head.deleting {
			return head.entry
		}
		return nil
	}
	var cs []claims.KeyClaim
	var recs []*linkRec
	for r := head; r != nil; r = r.next {
		if r.namespace == namespace {
			cs = append(cs, r.keyClaim())
			recs = append(recs, r)
		}
	}
	if i := claims.KeyHolder(cs); i >= 0 {
		return recs[i].entry
	}
	return nil
}

// refreshHost recomputes who serves host. Caller holds wmu.
func (ix *Index) refreshHost(host string) {
	owner := ix.domainOwner(host)
	if owner == nil {
		ix.mu.Lock()
		delete(ix.hosts, host)
		ix.mu.Unlock()
		return
	}
	cur := ix.hosts[host] // only writers change the map, and we hold wmu
	if cur != nil && cur.namespace == owner.namespace {
		ix.mu.Lock()
		cur.notFoundURL, cur.expiredURL = owner.notFoundURL, owner.expiredURL
		ix.mu.Unlock()
		return
	}
	// A new owner: build its keys before taking the read side's lock, so
	// readers wait only for the swap.
	sh := &servedHost{
		namespace:   owner.namespace,
		notFoundURL: owner.notFoundURL,
		expiredURL:  owner.expiredURL,
		keys:        map[string]*Entry{},
	}
	for key := range ix.linksByHost[host] {
		if e := ix.keyWinner(host, key, owner.namespace); e != nil {
			sh.keys[key] = e
		}
	}
	ix.mu.Lock()
	ix.hosts[host] = sh
	ix.mu.Unlock()
}

// refreshKey recomputes which Link serves host/key. Caller holds wmu.
func (ix *Index) refreshKey(host, key string) {
	sh := ix.hosts[host]
	if sh == nil {
		return
	}
	e := ix.keyWinner(host, key, sh.namespace)
	ix.mu.Lock()
	if e == nil {
		delete(sh.keys, key)
	} else {
		sh.keys[key] = e
	}
	ix.mu.Unlock()
}

// counterFor returns the click Counter of the Link l if the index holds it
// (made now if the Link was never clicked), else nil. The click spool
// replays into these.
func (ix *Index) counterFor(l clicks.Link) *clicks.Counter {
	ix.wmu.Lock()
	defer ix.wmu.Unlock()
	if rec := ix.links[l.Namespace][l.Name]; rec != nil && rec.entry.uid() == l.UID {
		return rec.entry.slot.Counter(l)
	}
	return nil
}
