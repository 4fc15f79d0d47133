// Package salt keeps the visitor salts of click analytics in a Secret
// (kurz-analytics-salt in kurz's namespace) that every replica reads: one
// salt per UTC day, today's and tomorrow's, so that one person is one
// visitor on every replica that day and, once a day's salt is gone, nobody
// can link that day's visitor hashes to addresses.
//
// Rotation: every replica checks the Secret every minute (and just after
// midnight UTC); one that finds today's or tomorrow's salt missing, or an
// older one still there, writes the Secret with the missing salts made and
// the old ones dropped, under the resourceVersion it read. Only one such
// write can succeed; the others conflict and read the winner's salts. So the
// rotation needs no leader and happens even while there is none; tomorrow's
// salt exists a day ahead, and every replica has it long before midnight.
//
// The salts are never logged, never written to the analytics store, and
// live only in this Secret and the replicas' memory.
//
// Versions: a salt's value names its algorithm (analytics.KindOf), and the
// Secret's keys are the days and nothing else, whichever kurz wrote it.
// kurz before SipHash made 32-byte BLAKE2b salts; this one makes SipHash
// salts, hashes with a BLAKE2b salt until its day is over, and keeps a
// salt of any kind it recognises when it rotates. kurz before SipHash
// reads a SipHash salt (69 bytes) as no salt and does not rewrite the
// Secret for it, so during a rolling upgrade: a day whose salt an old
// replica made is hashed with BLAKE2b by every replica; a day whose salt a
// new replica made (tomorrow's, made after midnight by whichever replica
// rotated first) is hashed with SipHash by new replicas and not at all by
// old ones (their clicks of that day count no visitor). No day's values
// change while it lasts, with one exception of a few seconds: an old
// replica that is the first to rotate at midnight replaces today's SipHash
// salt (it cannot read it) with a BLAKE2b one, and a visitor a new replica
// hashed between midnight and that rotation counts twice that day.
package salt

import (
	"context"
	"crypto/subtle"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kurz-dev/kurz/internal/analytics"
)

// SecretName is the Secret holding the salts.
const SecretName = "kurz-analytics-salt"

// Least privilege: creating cannot be limited to a name (the object does not
// exist yet), updating is limited to this Secret. Reading kurz-system's
// Secrets is granted for the routes' TLS already.
// +kubebuilder:rbac:groups="",resources=secrets,verbs=create,namespace=kurz-system
// +kubebuilder:rbac:groups="",resources=secrets,resourceNames=kurz-analytics-salt,verbs=get;update,namespace=kurz-system

// Keeper keeps a replica's salts from the Secret and rotates it. It is a
// manager runnable on every replica and the capture consumer's Salts.
type Keeper struct {
	r         client.Reader
	w         client.Writer
	namespace string
	every     time.Duration
	now       func() time.Time

	mu    sync.Mutex
	gen   uint64
	salts []analytics.DaySalt
	ready chan struct{}
	once  sync.Once
}

// NewKeeper returns a keeper of the Secret in namespace, read through r
// (the API reader: the manager's cache does not watch Secrets for this one
// object) and written through w.
func NewKeeper(r client.Reader, w client.Writer, namespace string) *Keeper {
	return &Keeper{r: r, w: w, namespace: namespace, every: time.Minute, now: time.Now, ready: make(chan struct{})}
}

// Salts is the current salts and their generation (capture.Salts).
func (k *Keeper) Salts() (uint64, []analytics.DaySalt) {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.gen, k.salts
}

// Ready is closed once the salts were read the first time.
func (k *Keeper) Ready() <-chan struct{} { return k.ready }

// NeedLeaderElection is false: every replica reads the salts, and rotates
// them when it finds them stale (see the package doc).
func (k *Keeper) NeedLeaderElection() bool { return false }

// Start syncs until ctx is done.
func (k *Keeper) Start(ctx context.Context) error {
	log := ctrl.LoggerFrom(ctx).WithName("analytics-salt")
	for {
		if err := k.Sync(ctx); err != nil && ctx.Err() == nil {
			log.Error(err, "analytics salts not synced; visitors of a day without a salt are not counted", "secret", k.namespace+"/"+SecretName)
		}
		wait := k.every
		if d := time.Until(nextMidnight(k.now())) + 2*time.Second; d < wait {
			wait = d
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(wait):
		}
	}
}

func nextMidnight(t time.Time) time.Time {
	y, m, d := t.UTC().Date()
	return time.Date(y, m, d+1, 0, 0, 0, 0, time.UTC)
}

func dayKey(t time.Time) string { return t.UTC().Format(time.DateOnly) }

// Sync reads the Secret, writes it when today's or tomorrow's salt is
// missing or an older one is left, and takes its salts.
func (k *Keeper) Sync(ctx context.Context) error {
	for attempt := 0; ; attempt++ {
		err := k.sync(ctx)
		if (apierrors.IsConflict(err) || apierrors.IsAlreadyExists(err)) && attempt < 3 {
			continue // another replica rotated first: read its salts
		}
		return err
	}
}

func (k *Keeper) sync(ctx context.Context) error {
	now := k.now().UTC()
	want := []string{dayKey(now), dayKey(now.Add(24 * time.Hour))}
	var s corev1.Secret
	err := k.r.Get(ctx, types.NamespacedName{Namespace: k.namespace, Name: SecretName}, &s)
	missing := apierrors.IsNotFound(err)
	if err != nil && !missing {
		return fmt.Errorf("read Secret %s/%s: %w", k.namespace, SecretName, err)
	}
	stale := missing || len(s.Data) != len(want)
	for _, d := range want {
		if analytics.KindOf(s.Data[d]) == analytics.SaltInvalid {
			stale = true
		}
	}
	if stale {
		data := map[string][]byte{}
		for _, d := range want {
			// A salt stays for its whole day whoever made it (a BLAKE2b
			// one of an older kurz, a newer kurz's): replacing it would
			// change the day's visitor values midway.
			if v := s.Data[d]; analytics.KindOf(v) != analytics.SaltInvalid {
				data[d] = v
			} else {
				data[d] = analytics.NewSalt()
			}
		}
		s.Data = data // yesterday's salt is gone: its hashes are unlinkable now
		s.Type = corev1.SecretTypeOpaque
		if missing {
			s.ObjectMeta = metav1.ObjectMeta{Namespace: k.namespace, Name: SecretName, Labels: map[string]string{"app.kubernetes.io/name": "kurz", "app.kubernetes.io/component": "analytics"}}
			err = k.w.Create(ctx, &s)
		} else {
			err = k.w.Update(ctx, &s)
		}
		if err != nil {
			return fmt.Errorf("rotate Secret %s/%s: %w", k.namespace, SecretName, err)
		}
	}
	k.take(now, s.Data)
	return nil
}

// take makes the Secret's salts of today and tomorrow current, bumping the
// generation only when they changed. A newer kurz's salt is left out: that
// day's clicks have no visitor here rather than values of another
// algorithm.
func (k *Keeper) take(now time.Time, data map[string][]byte) {
	var salts []analytics.DaySalt
	for _, t := range []time.Time{now, now.Add(24 * time.Hour)} {
		if v := data[dayKey(t)]; analytics.KindOf(v).Usable() {
			salts = append(salts, analytics.DaySalt{Day: t, Salt: v})
		}
	}
	k.mu.Lock()
	if !sameSalts(k.salts, salts) {
		k.salts = salts
		k.gen++
	}
	k.mu.Unlock()
	k.once.Do(func() { close(k.ready) })
}

func sameSalts(a, b []analytics.DaySalt) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if analytics.UnixDay(a[i].Day) != analytics.UnixDay(b[i].Day) || subtle.ConstantTimeCompare(a[i].Salt, b[i].Salt) != 1 {
			return false
		}
	}
	return true
}
