// Package wiring puts click analytics together for one process: it opens
// the store (a SQLite file or PostgreSQL, --analytics-store or
// KURZ_ANALYTICS_STORE), runs the visitor salt keeper, the capture ring and
// its consumer (handed to the redirect server as a click consumer) writing
// to the store and the OTLP export, each with its own queue, with countries
// from the GeoIP file (reloaded), the store's maintenance (rollups,
// retention, deleted links), and forgets the analytics of deleted Links.
// The API server reads through the same store. Without analytics,
// OnDemand is the same capture for webhooks' link.clicked alone, run only
// while a Webhook wants clicks.
package wiring

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	toolscache "k8s.io/client-go/tools/cache"
	ctrl "sigs.k8s.io/controller-runtime"

	kurzv1alpha1 "github.com/kurz-dev/kurz/api/v1alpha1"
	"github.com/kurz-dev/kurz/internal/analytics"
	"github.com/kurz-dev/kurz/internal/analytics/capture"
	"github.com/kurz-dev/kurz/internal/analytics/geoip"
	"github.com/kurz-dev/kurz/internal/analytics/otlp"
	"github.com/kurz-dev/kurz/internal/analytics/postgres"
	"github.com/kurz-dev/kurz/internal/analytics/salt"
	"github.com/kurz-dev/kurz/internal/analytics/sqlite"
)

// Analytics is what the roles of a process share.
type Analytics struct {
	// Store is read by the API server and written by Consumer; nil with
	// only the OTLP export (the API answers 503).
	Store analytics.Store
	// Ring and Consumer are the capture (nil without the redirect role).
	Ring     *capture.Ring
	Consumer *capture.Consumer
	// CountryHeader is --analytics-country-header.
	CountryHeader string
	// Salts is the visitor salt keeper (nil without the redirect role).
	Salts *salt.Keeper
}

// maintainEvery is how often the store computes rollups, applies
// retention and removes the analytics of Links deleted longer than the
// grace ago.
const maintainEvery = time.Hour

// forgetEvery is how often deleted Links are marked in the store.
const forgetEvery = 10 * time.Second

// Setup opens the store and adds analytics' runnables to mgr; nil when
// analytics is off. With redirect, clicks are captured; sinks get every
// enriched click besides the store (webhooks).
func Setup(ctx context.Context, mgr ctrl.Manager, o Options, redirect bool, sinks ...analytics.Sink) (*Analytics, error) {
	o.Complete()
	if !o.Enabled {
		return nil, nil
	}
	if err := o.Validate(); err != nil {
		return nil, err
	}
	log := ctrl.LoggerFrom(ctx).WithName("analytics")
	a := &Analytics{CountryHeader: o.CountryHeader}
	k := &keeper{}
	if o.Store != "" {
		store, err := openStore(ctx, o)
		if err != nil {
			return nil, fmt.Errorf("analytics: %w", err)
		}
		log.Info("analytics store opened", "store", o.storeName())
		a.Store, k.store = store, store
	}
	if redirect {
		if err := setupCapture(mgr, o, a, k, sinks); err != nil {
			_ = k.close()
			return nil, err
		}
	} else if k.store == nil {
		return a, nil // export only, and no capture here: nothing to do
	}
	if err := mgr.Add(k); err != nil {
		_ = k.close()
		return nil, err
	}
	if k.store == nil {
		return a, nil
	}
	links, err := mgr.GetCache().GetInformer(ctx, &kurzv1alpha1.Link{})
	if err != nil {
		return nil, fmt.Errorf("analytics: Link informer: %w", err)
	}
	if _, err := links.AddEventHandler(toolscache.ResourceEventHandlerFuncs{DeleteFunc: k.deleted}); err != nil {
		return nil, fmt.Errorf("analytics: Link informer: %w", err)
	}
	return a, nil
}

// setupCapture builds the redirect's capture: the salt keeper, the ring,
// the consumer writing to the store and the OTLP export, and the GeoIP
// database it looks countries up in.
func setupCapture(mgr ctrl.Manager, o Options, a *Analytics, k *keeper, sinks []analytics.Sink) error {
	ns := o.SaltNamespace
	if ns == "" {
		var err error
		if ns, err = podNamespace(); err != nil {
			return err
		}
	}
	a.Salts = salt.NewKeeper(mgr.GetAPIReader(), mgr.GetClient(), ns)
	a.Ring = capture.NewRing(o.Capture.RingSize)
	c, geo, err := newConsumer(o, a.Ring, a.Salts, k, sinks)
	if err != nil {
		return err
	}
	a.Consumer, k.consumer = c, c
	if geo != nil {
		if err := mgr.Add(&geoReloader{db: geo, every: o.GeoIP.ReloadInterval}); err != nil {
			return err
		}
	}
	return mgr.Add(a.Salts)
}

// newConsumer is the capture's consumer of ring: aggregated batches to
// the store (k.store) and the OTLP export (k.export is set to close it),
// countries looked up in the GeoIP file (returned, for its reloads).
func newConsumer(o Options, ring *capture.Ring, salts capture.Salts, k *keeper, sinks []analytics.Sink) (*capture.Consumer, *geoip.DB, error) {
	co := o.Capture
	co.WriterID = writerID()
	var outs []capture.Output
	if k.store != nil {
		outs = append(outs, capture.Output{Name: capture.StoreOutput, W: k.store})
	}
	if o.OTLP.Endpoint != "" {
		oo := o.OTLP
		if err := oo.HeadersFromEnv(); err != nil {
			return nil, nil, err
		}
		x, err := otlp.New(oo)
		if err != nil {
			return nil, nil, fmt.Errorf("analytics: %w", err)
		}
		k.export = x
		// One try: a collector cannot tell a batch it got twice; the
		// exporter retries each request itself within the timeout, which
		// ends before the next minute's batch is queued.
		outs = append(outs, capture.Output{Name: "otlp", W: x, Attempts: 1, Timeout: co.FlushInterval})
	}
	var geo *geoip.DB
	if o.GeoIP.Database != "" {
		var err error
		if geo, err = geoip.Open(o.GeoIP.Database); err != nil {
			return nil, nil, fmt.Errorf("analytics: %w", err)
		}
	}
	c, err := capture.NewWithOutputs(co, ring, salts, outs, sinks...)
	if err != nil {
		return nil, nil, err
	}
	if geo != nil {
		c.SetGeoIP(geo)
	}
	return c, geo, nil
}

// geoReloader reloads the GeoIP file when it changes, on every replica.
type geoReloader struct {
	db    *geoip.DB
	every time.Duration
}

func (*geoReloader) NeedLeaderElection() bool { return false }

func (r *geoReloader) Start(ctx context.Context) error {
	log := ctrl.LoggerFrom(ctx).WithName("analytics")
	r.db.Run(ctx, r.every, func(err error) {
		if err != nil {
			// The path and the parser's complaint: no secret in either.
			capture.GeoIPReloadFailed()
			log.Error(err, "GeoIP database not reloaded; the previous version keeps answering")
			return
		}
		log.Info("GeoIP database reloaded")
	})
	return nil
}

// openStore opens the PostgreSQL store for a postgres:// URL, else the
// SQLite file. Its errors never hold the URL's password.
func openStore(ctx context.Context, o Options) (analytics.Store, error) {
	if postgres.IsURL(o.Store) {
		return postgres.Open(ctx, o.postgresOptions())
	}
	so := o.SQLite
	so.Path = o.Store
	return sqlite.Open(ctx, so)
}

// keeper is the store's upkeep on every process that has it: deleted
// Links are forgotten (marked; their rows go after --analytics-delete-grace),
// Maintain runs hourly, and the store is closed once the capture's last
// batch is written.
type keeper struct {
	store    analytics.Store // nil: export only
	export   io.Closer       // the OTLP exporter, nil without
	consumer *capture.Consumer

	mu   sync.Mutex
	gone []string
}

func (k *keeper) NeedLeaderElection() bool { return false }

// deleted records a Link's deletion (a namespace's deletion deletes its
// Links one by one).
func (k *keeper) deletedUID(uid string) {
	k.mu.Lock()
	k.gone = append(k.gone, uid)
	k.mu.Unlock()
}

func (k *keeper) deleted(obj any) {
	if d, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
		obj = d.Obj
	}
	if l, ok := obj.(*kurzv1alpha1.Link); ok {
		k.deletedUID(string(l.UID))
	}
}

func (k *keeper) forget(ctx context.Context) error {
	k.mu.Lock()
	uids := k.gone
	k.gone = nil
	k.mu.Unlock()
	if len(uids) == 0 || k.store == nil {
		return nil
	}
	if err := k.store.Forget(ctx, time.Now(), uids...); err != nil {
		k.mu.Lock()
		k.gone = append(k.gone, uids...) // again next time
		k.mu.Unlock()
		return err
	}
	return nil
}

func (k *keeper) Start(ctx context.Context) error {
	log := ctrl.LoggerFrom(ctx).WithName("analytics")
	forget := time.NewTicker(forgetEvery)
	defer forget.Stop()
	maintain := time.NewTimer(time.Minute) // not in the start's rush
	defer maintain.Stop()
	for {
		select {
		case <-ctx.Done():
			if k.consumer != nil {
				// The redirect server finishes the consumer (the last
				// batch) after it drained; close after that.
				select {
				case <-k.consumer.Done():
				case <-time.After(time.Minute):
				}
			}
			_ = k.forget(context.Background())
			return k.close()
		case <-forget.C:
			if err := k.forget(ctx); err != nil {
				log.Error(err, "analytics: deleted links not marked yet")
			}
		case <-maintain.C:
			if k.store == nil {
				continue
			}
			start := time.Now()
			if err := k.store.Maintain(ctx, start); err != nil {
				log.Error(err, "analytics maintenance failed")
			} else {
				log.V(1).Info("analytics maintained", "took", time.Since(start).String())
			}
			maintain.Reset(maintainEvery)
		}
	}
}

// close closes the store and the exporter.
func (k *keeper) close() error {
	var errs []error
	if k.store != nil {
		errs = append(errs, k.store.Close())
	}
	if k.export != nil {
		errs = append(errs, k.export.Close())
	}
	return errors.Join(errs...)
}

// writerID names this process's batches: the pod and a random suffix.
func writerID() string {
	name := os.Getenv("POD_NAME")
	if name == "" {
		name, _ = os.Hostname()
	}
	if len(name) > 100 {
		name = name[:100]
	}
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	return name + "-" + hex.EncodeToString(b)
}

// podNamespace is the namespace kurz runs in.
func podNamespace() (string, error) {
	b, err := os.ReadFile("/var/run/secrets/kubernetes.io/serviceaccount/namespace")
	if err != nil {
		return "", fmt.Errorf("analytics: give --analytics-salt-namespace outside a cluster: %w", err)
	}
	return strings.TrimSpace(string(b)), nil
}
