package webhooks

import (
	"context"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	toolscache "k8s.io/client-go/tools/cache"
	ctrl "sigs.k8s.io/controller-runtime"

	kurzv1alpha1 "github.com/kurz-dev/kurz/api/v1alpha1"
)

// A leader hands its change events to its own replica's dispatcher, which
// holds them in memory until they are delivered: a leader that dies takes
// the undelivered ones with it, and the Links deleted while no leader ran
// would never be told. So every replica remembers the Links its informer
// saw deleted (for the namespaces whose Webhooks want link.deleted), and a
// replica that starts to lead sends again the changes of the last
// replayWindow that the objects still show: created, updated, expired,
// conflicting Links, verified Domains and ready certificates, and the
// deletes it remembers. Their ids are the ones the old leader used (they
// derive from the objects' state), so a receiver drops what it had
// already; domain.unverified is not resent (a Pending Domain does not show
// that it was Active before). docs/webhooks.md, "Leader changes", says
// what is lost, and TestLeaderChange measures it.
const (
	replayWindow = 5 * time.Minute
	// deletesKept bounds the deletes remembered (a Link each, as cached).
	deletesKept = 4096
)

// Lead runs while this replica leads (the controllers' term runs it): it
// resends the recent changes, then sends link.deleted as the informer sees
// deletes, until ctx ends.
func (d *Dispatcher) Lead(ctx context.Context) error {
	d.leading.Store(true)
	defer d.leading.Store(false)
	n := d.replay(ctx, d.now().Add(-replayWindow))
	ctrl.LoggerFrom(ctx).Info("leading: resent the recent webhook events", "events", n, "window", replayWindow.String())
	<-ctx.Done()
	return nil
}

// replay emits the changes since since that the cached objects show, and
// the remembered deletes; it returns how many. It waits for room in the
// inbox rather than dropping: it runs on its own goroutine.
func (d *Dispatcher) replay(ctx context.Context, since time.Time) int {
	r := replayer{d: d, ctx: ctx, since: since}
	namespaces := d.webhookNamespaces()
	links := linksIn(d.links, namespaces)
	for _, ns := range namespaces {
		for _, l := range links[ns] {
			r.link(l)
		}
		for _, dm := range cachedIn[kurzv1alpha1.Domain](d.domains, ns) {
			r.domain(dm)
		}
	}
	// A Link deleted lately may have had its creation or edit queued too:
	// the cache no longer shows it, the remembered copy does.
	for _, del := range d.deletes.since(since) {
		r.link(del.link)
		r.emit(del.link.Namespace, Deleted(del.link, del.at))
	}
	return r.n
}

// replayer sends the changes since since that objects show.
type replayer struct {
	d     *Dispatcher
	ctx   context.Context
	since time.Time
	n     int
}

// emit sends c when a Webhook of namespace wants it and it happened since
// r.since; the object is copied (c holds the cache's).
func (r *replayer) emit(namespace string, c Change) {
	if c.Time.Before(r.since) || !r.d.Wants(namespace, c.Type) {
		return
	}
	if c.Link != nil {
		c.Link = c.Link.DeepCopy()
	} else {
		c.Domain = c.Domain.DeepCopy()
	}
	select {
	case r.d.changes <- c:
		r.n++
	case <-r.ctx.Done():
	}
}

// link sends the changes l shows: its creation, its last edit, and its
// expiry or conflict.
func (r *replayer) link(l *kurzv1alpha1.Link) {
	if l.Status.ObservedGeneration == 0 {
		return // never reconciled: no event was sent, the controller will send it
	}
	r.emit(l.Namespace, Created(l))
	if l.Generation > 1 && l.Status.ObservedGeneration == l.Generation {
		r.emit(l.Namespace, Updated(l))
	}
	switch readyReason(l.Status.Conditions) {
	case kurzv1alpha1.ReasonExpired:
		r.emit(l.Namespace, Expired(l))
	case kurzv1alpha1.ReasonKeyConflict:
		r.emit(l.Namespace, Conflict(l))
	}
}

// domain sends the changes d shows: verified, and its certificate ready.
func (r *replayer) domain(d *kurzv1alpha1.Domain) {
	if d.Status.Phase == kurzv1alpha1.DomainActive {
		r.emit(d.Namespace, Verified(d))
	}
	if tlsReady(d) {
		r.emit(d.Namespace, TLSReady(d))
	}
}

// webhookNamespaces lists the namespaces that have Webhooks.
func (d *Dispatcher) webhookNamespaces() []string {
	seen := map[string]bool{}
	var out []string
	for _, o := range d.webhooks.List() {
		if w, ok := o.(*kurzv1alpha1.Webhook); ok && !seen[w.Namespace] {
			seen[w.Namespace] = true
			out = append(out, w.Namespace)
		}
	}
	return out
}

// linksIn returns the cached Links (read only) of namespaces, by
// namespace, from one walk of the cache: the Link informer has no
// namespace index (a set entry per Link, for this replay only; see
// internal/manager's informersWith).
func linksIn(ix toolscache.Indexer, namespaces []string) map[string][]*kurzv1alpha1.Link {
	out := make(map[string][]*kurzv1alpha1.Link, len(namespaces))
	if len(namespaces) == 0 {
		return out
	}
	for _, ns := range namespaces {
		out[ns] = nil
	}
	for _, o := range ix.List() {
		if l, ok := o.(*kurzv1alpha1.Link); ok {
			if ls, want := out[l.Namespace]; want {
				out[l.Namespace] = append(ls, l)
			}
		}
	}
	return out
}

// cachedIn returns the cached objects of namespace (read only), through
// the informer's namespace index (Domains'; Links have none: linksIn).
func cachedIn[T any](ix toolscache.Indexer, namespace string) []*T {
	objs, err := ix.ByIndex(toolscache.NamespaceIndex, namespace)
	if err != nil {
		return nil
	}
	out := make([]*T, 0, len(objs))
	for _, o := range objs {
		if t, ok := o.(*T); ok {
			out = append(out, t)
		}
	}
	return out
}

func readyReason(conds []metav1.Condition) string {
	for i := range conds {
		if conds[i].Type == kurzv1alpha1.ConditionReady {
			return conds[i].Reason
		}
	}
	return ""
}

func tlsReady(dm *kurzv1alpha1.Domain) bool {
	for i := range dm.Status.Conditions {
		if c := dm.Status.Conditions[i]; c.Type == kurzv1alpha1.ConditionTLSReady {
			return c.Status == metav1.ConditionTrue
		}
	}
	return false
}

// linkDeleted is the Link informer's delete handler, on every replica: it
// remembers the Link when a Webhook of its namespace wants link.deleted,
// and sends the event at once while this replica leads.
func (d *Dispatcher) linkDeleted(obj any) {
	if t, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
		obj = t.Obj
	}
	l, ok := obj.(*kurzv1alpha1.Link)
	if !ok || !d.Wants(l.Namespace, kurzv1alpha1.EventLinkDeleted) {
		return
	}
	l = l.DeepCopy()
	now := d.now()
	d.deletes.add(l, now)
	if d.leading.Load() {
		d.Emit(Deleted(l, now))
	}
}

// deletedLink is a Link seen deleted, and when.
type deletedLink struct {
	link *kurzv1alpha1.Link
	at   time.Time
}

// recentDeletes is a ring of the last deletesKept deletes.
type recentDeletes struct {
	mu   sync.Mutex
	ring []deletedLink
	next int
}

func (r *recentDeletes) add(l *kurzv1alpha1.Link, at time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.ring) < deletesKept {
		r.ring = append(r.ring, deletedLink{l, at})
		return
	}
	r.ring[r.next] = deletedLink{l, at}
	r.next = (r.next + 1) % deletesKept
}

func (r *recentDeletes) since(t time.Time) []deletedLink {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []deletedLink
	for _, del := range r.ring {
		if !del.at.Before(t) {
			out = append(out, del)
		}
	}
	return out
}
