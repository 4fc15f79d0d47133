package webhooks

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/uuid"
	toolscache "k8s.io/client-go/tools/cache"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kurzv1alpha1 "github.com/kurz-dev/kurz/api/v1alpha1"
)

// Size of the dispatcher's changes inbox. A controller that hands it an
// event never waits: a full inbox drops the event and counts it. The
// router empties it in microseconds per event. Clicks have no inbox: they
// are batched on the capture's goroutine (Clicked).
const changesInbox = 4096

// statusInterval is the least time between two writes of one Webhook's
// delivery figures by one replica.
const statusInterval = 30 * time.Second

// Dispatcher delivers the events of every Webhook of the cluster, on every
// replica: change events the controllers hand it (Emit, the leader's) and
// link.clicked batches of this replica's clicks (Clicked). It is a manager
// runnable that needs no leader election.
type Dispatcher struct {
	o        Options
	client   client.Client
	cache    cache.Cache
	webhooks toolscache.Indexer
	links    toolscache.Indexer
	domains  toolscache.Indexer
	roots    *x509.CertPool
	resolver *net.Resolver
	// replica names this process in link.clicked batch ids.
	replica string
	now     func() time.Time
	// statusInterval is statusInterval; tests shorten it.
	statusInterval time.Duration

	mu      sync.Mutex
	ctx     context.Context // Start's; senders run under it
	senders map[types.UID]*sender

	changes chan Change
	// batchMu guards the link.clicked batching, which runs on the
	// goroutine that calls Clicked and, for batches that waited
	// maxBatchWait, on sendWaitingBatches': enc and click (a click's JSON
	// moving to the next batch), linkKey (cachedLink's scratch), routes
	// (the senders of the Webhooks of a namespace that want link.clicked,
	// as of routesGen), filling (the senders with a batch begun) and the
	// senders' batches. It is held for CPU work only, never across I/O.
	batchMu   sync.Mutex
	enc       clickEncoder
	click     []byte
	linkKey   []byte
	routes    map[string][]*sender
	routesGen uint64
	filling   map[*sender]struct{}
	// webhooksGen counts the changes the Webhook informer reported: a
	// route found before the last one is found again.
	webhooksGen atomic.Uint64
	// wantClicks is true while a Webhook wants link.clicked; onDemand are
	// told when it flips (demandMu orders the flips).
	wantClicks atomic.Bool
	demandMu   sync.Mutex
	onDemand   []func(bool)

	// leading is true while this replica leads (Lead runs).
	leading atomic.Bool
	// deletes are the Links seen deleted lately (Lead resends them).
	deletes recentDeletes
}

// New builds a dispatcher on mgr's cache and client; add it to mgr (Setup
// does both). mgr's cache must hold Webhooks, Namespaces and Links, and
// the signing Secrets (CacheSecrets).
func New(mgr ctrl.Manager, o Options) (*Dispatcher, error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	register()
	roots, err := o.certPool()
	if err != nil {
		return nil, err
	}
	ctx := context.Background()
	webhooks, err := indexerOf(ctx, mgr.GetCache(), &kurzv1alpha1.Webhook{})
	if err != nil {
		return nil, err
	}
	links, err := indexerOf(ctx, mgr.GetCache(), &kurzv1alpha1.Link{})
	if err != nil {
		return nil, err
	}
	domains, err := indexerOf(ctx, mgr.GetCache(), &kurzv1alpha1.Domain{})
	if err != nil {
		return nil, err
	}
	// Creating the informers now makes the manager sync them before it
	// starts the runnables.
	for _, obj := range []client.Object{&corev1.Namespace{}, &corev1.Secret{}} {
		if _, err := mgr.GetCache().GetInformer(ctx, obj, cache.BlockUntilSynced(false)); err != nil {
			return nil, fmt.Errorf("webhooks: %T informer: %w", obj, err)
		}
	}
	host, _ := os.Hostname()
	return &Dispatcher{
		o: o, client: mgr.GetClient(), cache: mgr.GetCache(), webhooks: webhooks, links: links, domains: domains,
		roots: roots, resolver: o.resolver(),
		replica: host + "_" + string(uuid.NewUUID()),
		now:     time.Now, statusInterval: statusInterval,
		senders: map[types.UID]*sender{},
		changes: make(chan Change, changesInbox),
		filling: map[*sender]struct{}{},
	}, nil
}

// Setup builds a dispatcher and adds it to mgr.
func Setup(mgr ctrl.Manager, o Options) (*Dispatcher, error) {
	d, err := New(mgr, o)
	if err != nil {
		return nil, err
	}
	// The delete handler is added before the cache starts, not in Start:
	// runnables start after the caches synced, and a standby whose
	// handler came later would miss the deletes in between, which it must
	// resend should it come to lead (TestLeaderChange).
	linkInf, err := mgr.GetCache().GetInformer(context.Background(), &kurzv1alpha1.Link{}, cache.BlockUntilSynced(false))
	if err != nil {
		return nil, fmt.Errorf("webhooks: Link informer: %w", err)
	}
	if _, err := linkInf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{DeleteFunc: d.linkDeleted}); err != nil {
		return nil, fmt.Errorf("webhooks: Link informer: %w", err)
	}
	return d, mgr.Add(d)
}

// indexerOf returns the indexer of the cache's informer for obj, without
// waiting for it to sync.
func indexerOf(ctx context.Context, c cache.Cache, obj client.Object) (toolscache.Indexer, error) {
	inf, err := c.GetInformer(ctx, obj, cache.BlockUntilSynced(false))
	if err != nil {
		return nil, fmt.Errorf("webhooks: %T informer: %w", obj, err)
	}
	ii, ok := inf.(interface{ GetIndexer() toolscache.Indexer })
	if !ok {
		return nil, fmt.Errorf("webhooks: the %T informer (%T) has no indexer", obj, inf)
	}
	return ii.GetIndexer(), nil
}

// NeedLeaderElection is false: every replica delivers its clicks, and the
// changes its controllers see while it leads.
func (d *Dispatcher) NeedLeaderElection() bool { return false }

// Start delivers until ctx ends; then it stops every sender (what is still
// queued is dropped and counted: reason shutdown).
func (d *Dispatcher) Start(ctx context.Context) error {
	log := ctrl.LoggerFrom(ctx).WithName("webhooks")
	ctx = ctrl.LoggerInto(ctx, log)
	inf, err := d.cache.GetInformer(ctx, &kurzv1alpha1.Webhook{})
	if err != nil {
		return fmt.Errorf("webhooks: Webhook informer: %w", err)
	}
	d.mu.Lock()
	d.ctx = ctx
	d.mu.Unlock()
	// The informer calls these after its store changed: a route the
	// clicks loop finds after the count moved reads the changed store.
	reg, err := inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc: func(any) {
			d.webhooksGen.Add(1)
			d.recountClicks()
		},
		UpdateFunc: func(_, obj any) {
			if w, ok := obj.(*kurzv1alpha1.Webhook); ok {
				d.refresh(w)
			}
			d.webhooksGen.Add(1)
			d.recountClicks()
		},
		DeleteFunc: func(obj any) {
			if t, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
				obj = t.Obj
			}
			if w, ok := obj.(*kurzv1alpha1.Webhook); ok {
				d.forget(w.UID)
			}
			d.webhooksGen.Add(1)
			d.recountClicks()
		},
	})
	if err != nil {
		return fmt.Errorf("webhooks: Webhook informer: %w", err)
	}
	var wg sync.WaitGroup
	for _, loop := range []func(context.Context){d.routeChanges, d.sendWaitingBatches, d.writeFigures} {
		wg.Go(func() { loop(ctx) })
	}
	log.Info("delivering webhooks", "allowLoopback", d.o.AllowLoopback, "allowClusterServices", d.o.AllowClusterServices)
	<-ctx.Done()
	_ = inf.RemoveEventHandler(reg)
	wg.Wait()
	d.mu.Lock()
	senders := d.senders
	d.senders = map[types.UID]*sender{}
	d.mu.Unlock()
	for _, s := range senders {
		s.stop(dropShutdown)
	}
	return nil
}

// Wants reports whether a Webhook of namespace subscribes to t. It reads
// the informer's store, so it is right from the cache's first sync.
func (d *Dispatcher) Wants(namespace string, t kurzv1alpha1.WebhookEvent) bool {
	for _, w := range d.webhooksOf(namespace) {
		if wants(w, t) {
			return true
		}
	}
	return false
}

// Emit hands a change event to delivery; it never blocks.
func (d *Dispatcher) Emit(c Change) {
	select {
	case d.changes <- c:
	default:
		dropped.WithLabelValues(dropInboxFull).Inc()
	}
}

// webhooksOf returns the cached Webhooks of namespace: the cache's own
// objects, read only.
func (d *Dispatcher) webhooksOf(namespace string) []*kurzv1alpha1.Webhook {
	objs, err := d.webhooks.ByIndex(toolscache.NamespaceIndex, namespace)
	if err != nil || len(objs) == 0 {
		return nil
	}
	out := make([]*kurzv1alpha1.Webhook, 0, len(objs))
	for _, o := range objs {
		if w, ok := o.(*kurzv1alpha1.Webhook); ok && w.DeletionTimestamp == nil {
			out = append(out, w)
		}
	}
	return out
}

func wants(w *kurzv1alpha1.Webhook, t kurzv1alpha1.WebhookEvent) bool {
	for _, e := range w.Spec.Events {
		if e == t {
			return true
		}
	}
	return false
}

// senderFor returns w's sender, made on first use, its configuration that
// of w's generation; nil before Start or after it ended, and for a Webhook
// the cache no longer holds.
func (d *Dispatcher) senderFor(w *kurzv1alpha1.Webhook) *sender {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.ctx == nil || d.ctx.Err() != nil {
		return nil
	}
	s := d.senders[w.UID]
	if s == nil {
		if !d.stillCached(w) {
			return nil
		}
		s = d.newSender(d.ctx, types.NamespacedName{Namespace: w.Namespace, Name: w.Name}, d.configOf(w))
		d.senders[w.UID] = s
		return s
	}
	if s.cfg.Load().generation != w.Generation {
		d.swap(s, d.configOf(w))
	}
	return s
}

// stillCached reports whether the informer's store holds w (its name with
// its uid). Callers read w from the store a moment before: if it was
// deleted since, its delete handler (forget) may have run already, and a
// sender made now would run until the process ends, holding its queue.
// The informer drops an object from its store before its handlers run,
// and forget takes d.mu: checked under d.mu, a Webhook still in the store
// is forgotten after its sender is made, one gone gets none.
func (d *Dispatcher) stillCached(w *kurzv1alpha1.Webhook) bool {
	obj, ok, err := d.webhooks.GetByKey(w.Namespace + "/" + w.Name)
	if err != nil || !ok {
		return false
	}
	cached, isWebhook := obj.(*kurzv1alpha1.Webhook)
	return isWebhook && cached.UID == w.UID
}

// refresh gives w's sender, if it has one, the configuration of w's
// generation: what is queued goes to the new URL with the new limits.
func (d *Dispatcher) refresh(w *kurzv1alpha1.Webhook) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if s := d.senders[w.UID]; s != nil && s.cfg.Load().generation != w.Generation {
		d.swap(s, d.configOf(w))
	}
}

func (d *Dispatcher) swap(s *sender, cfg *senderConfig) {
	if old := s.cfg.Swap(cfg); old.client != nil {
		old.client.CloseIdleConnections()
	}
}

// forget stops the sender of a deleted Webhook; what it had queued is
// dropped and counted (reason deleted).
func (d *Dispatcher) forget(uid types.UID) {
	d.mu.Lock()
	s := d.senders[uid]
	delete(d.senders, uid)
	d.mu.Unlock()
	if s != nil {
		go s.stop(dropDeleted)
	}
}

// sendersNow returns the senders there are.
func (d *Dispatcher) sendersNow() []*sender {
	d.mu.Lock()
	defer d.mu.Unlock()
	out := make([]*sender, 0, len(d.senders))
	for _, s := range d.senders {
		out = append(out, s)
	}
	return out
}

// newClient is a Webhook's HTTP client.
func (d *Dispatcher) newClient(p addressPolicy, timeout time.Duration) *http.Client {
	return newClient(p, d.resolver, d.roots, timeout)
}

// errNoSecret: the Webhook's Secret is missing, not labelled for signing,
// or lacks the key. The controller says which in the Webhook's conditions.
var errNoSecret = errors.New("no signing Secret")

// signingKeys reads the keys of a Webhook's Secret from the cache, which
// holds only Secrets labelled kurz.dev/webhook-signing=true (and, in kurz's
// own namespace, its TLS Secrets: hence the label is checked again).
func (d *Dispatcher) signingKeys(ctx context.Context, namespace string, ref kurzv1alpha1.WebhookSecretRef) ([][]byte, error) {
	value, err := SecretValue(ctx, d.cache, namespace, ref)
	if err != nil {
		return nil, err
	}
	return ParseSecret(value)
}

// SecretValue reads the value of a Webhook's signing Secret through r (a
// cache holding the labelled Secrets): errNoSecret-wrapped errors say
// what is missing, without the value.
func SecretValue(ctx context.Context, r client.Reader, namespace string, ref kurzv1alpha1.WebhookSecretRef) ([]byte, error) {
	key := ref.Key
	if key == "" {
		key = "secret"
	}
	var s corev1.Secret
	if err := r.Get(ctx, types.NamespacedName{Namespace: namespace, Name: ref.Name}, &s); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, fmt.Errorf("%w: Secret %s not found, or without the label %s=true", errNoSecret, ref.Name, kurzv1alpha1.WebhookSigningLabel)
		}
		return nil, err
	}
	if s.Labels[kurzv1alpha1.WebhookSigningLabel] != "true" {
		return nil, fmt.Errorf("%w: Secret %s lacks the label %s=true", errNoSecret, ref.Name, kurzv1alpha1.WebhookSigningLabel)
	}
	v, ok := s.Data[key]
	if !ok {
		return nil, fmt.Errorf("%w: Secret %s has no key %s", errNoSecret, ref.Name, key)
	}
	return v, nil
}

// IsNoSecret reports whether err says a Webhook's Secret is missing.
func IsNoSecret(err error) bool { return errors.Is(err, errNoSecret) }

// workspaceID is namespace's uid, the API's workspace_id.
func (d *Dispatcher) workspaceID(ctx context.Context, namespace string) string {
	var ns corev1.Namespace
	if err := d.cache.Get(ctx, types.NamespacedName{Name: namespace}, &ns); err != nil {
		return ""
	}
	return string(ns.UID)
}
