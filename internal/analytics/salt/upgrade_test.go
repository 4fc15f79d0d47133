package salt

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"golang.org/x/crypto/blake2b"

	"github.com/kurz-dev/kurz/internal/analytics"
	"github.com/kurz-dev/kurz/internal/testenv"
)

// oldKeeper is a replica of kurz before SipHash salts (commit 55cbc1c): its
// Keeper.sync and take, and its visitor hash, as they were, so that a
// rolling upgrade can be played against a real API server.
type oldKeeper struct {
	namespace string
	now       *time.Time
	salts     map[string][]byte // day -> salt
}

func (k *oldKeeper) Sync(ctx context.Context) error {
	for attempt := 0; ; attempt++ {
		err := k.sync(ctx)
		if (apierrors.IsConflict(err) || apierrors.IsAlreadyExists(err)) && attempt < 3 {
			continue
		}
		return err
	}
}

func (k *oldKeeper) sync(ctx context.Context) error {
	const minSaltLen, maxSaltLen = 16, 64
	now := k.now.UTC()
	want := []string{dayKey(now), dayKey(now.Add(24 * time.Hour))}
	var s corev1.Secret
	err := k8s.Get(ctx, types.NamespacedName{Namespace: k.namespace, Name: SecretName}, &s)
	missing := apierrors.IsNotFound(err)
	if err != nil && !missing {
		return err
	}
	stale := missing || len(s.Data) != len(want)
	for _, d := range want {
		if len(s.Data[d]) < minSaltLen {
			stale = true
		}
	}
	if stale {
		data := map[string][]byte{}
		for _, d := range want {
			if v := s.Data[d]; len(v) >= minSaltLen && len(v) <= maxSaltLen {
				data[d] = v
			} else {
				b := make([]byte, 32)
				_, _ = rand.Read(b)
				data[d] = b
			}
		}
		s.Data = data
		s.Type = corev1.SecretTypeOpaque
		if missing {
			s.ObjectMeta = metav1.ObjectMeta{Namespace: k.namespace, Name: SecretName}
			err = k8s.Create(ctx, &s)
		} else {
			err = k8s.Update(ctx, &s)
		}
		if err != nil {
			return err
		}
	}
	k.salts = map[string][]byte{}
	for _, d := range want {
		if v := s.Data[d]; len(v) >= minSaltLen && len(v) <= maxSaltLen {
			k.salts[d] = v
		}
	}
	return nil
}

// Hash is the old replica's visitor of a click at t: keyed BLAKE2b-64, 0
// without a salt for t's day.
func (k *oldKeeper) Hash(t time.Time, ua []byte) uint64 {
	salt := k.salts[dayKey(t)]
	if salt == nil {
		return 0
	}
	h, err := blake2b.New(8, salt)
	if err != nil {
		panic(err)
	}
	ip := netipAddr("192.0.2.7").As16()
	h.Write(ip[:])
	h.Write(ua)
	x := binary.LittleEndian.Uint64(h.Sum(nil))
	if x == 0 {
		return 1
	}
	return x
}

// A rolling upgrade from BLAKE2b salts to SipHash salts, with old and new
// replicas side by side across two midnights: no replica ever rewrites the
// Secret because of the other version (they do not fight), every replica
// that counts a day's visitor gives it the same value all day, and an old
// replica counts no visitor on a day only new replicas can read.
func TestRollingUpgradeKeepsEachDaysVisitors(t *testing.T) {
	testenv.Need(t)
	g := NewWithT(t)
	ctx := context.Background()
	ns := "salt-upgrade"
	g.Expect(k8s.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})).To(Succeed())

	now := time.Date(2026, 4, 1, 12, 0, 0, 0, time.UTC)
	old := []*oldKeeper{{namespace: ns, now: &now}, {namespace: ns, now: &now}}
	news := []*Keeper{keeperAt(ns, &now), keeperAt(ns, &now)}
	ua := []byte("Mozilla/5.0 (X11; Linux x86_64)")
	ip := netipAddr("192.0.2.7")
	newHash := func(k *Keeper, at time.Time) uint64 {
		_, salts := k.Salts()
		v, err := analytics.NewVisitors(salts...)
		g.Expect(err).NotTo(HaveOccurred())
		return v.Hash(at, ip, ua)
	}
	version := func() string {
		var s corev1.Secret
		g.Expect(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: SecretName}, &s)).To(Succeed())
		return s.ResourceVersion
	}
	syncOld := func() {
		for _, k := range old {
			g.Expect(k.Sync(ctx)).To(Succeed())
		}
	}
	syncNew := func() {
		for _, k := range news {
			g.Expect(k.Sync(ctx)).To(Succeed())
		}
	}
	day := func(d int) time.Time { return time.Date(2026, 4, 1+d, 15, 0, 0, 0, time.UTC) } // a click of April 1st + d

	// April 1st, before the upgrade: old replicas made both salts.
	syncOld()
	apr1, apr2 := old[0].Hash(day(0), ua), old[0].Hash(day(1), ua)
	g.Expect(apr1).NotTo(BeZero())
	g.Expect(old[1].Hash(day(0), ua)).To(Equal(apr1))

	// The upgrade, at noon: new replicas join, nobody writes, and the new
	// ones hash April 1st and 2nd with the old salts' BLAKE2b.
	rv := version()
	for range 3 {
		syncNew()
		syncOld()
	}
	g.Expect(version()).To(Equal(rv), "old and new replicas rewrite the Secret for each other")
	for _, k := range news {
		g.Expect(newHash(k, day(0))).To(Equal(apr1), "a new replica changes April 1st's visitor")
		g.Expect(newHash(k, day(1))).To(Equal(apr2), "a new replica changes April 2nd's visitor")
	}

	// Midnight; a new replica rotates first: April 2nd keeps its BLAKE2b
	// salt, April 3rd gets a SipHash one. The old replicas then find
	// nothing to rewrite, hash April 2nd alike, and April 3rd not at all.
	now = time.Date(2026, 4, 2, 0, 0, 2, 0, time.UTC)
	syncNew()
	rv = version()
	var sec corev1.Secret
	g.Expect(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: SecretName}, &sec)).To(Succeed())
	g.Expect(sec.Data).To(HaveLen(2))
	g.Expect(analytics.KindOf(sec.Data["2026-04-02"])).To(Equal(analytics.SaltBLAKE2b))
	g.Expect(analytics.KindOf(sec.Data["2026-04-03"])).To(Equal(analytics.SaltSipHash))
	for range 3 {
		syncOld()
		syncNew()
	}
	g.Expect(version()).To(Equal(rv), "an old replica rewrites a Secret with a SipHash salt")
	apr3 := newHash(news[0], day(2))
	g.Expect(apr3).NotTo(BeZero())
	for _, k := range news {
		g.Expect(newHash(k, day(1))).To(Equal(apr2))
		g.Expect(newHash(k, day(2))).To(Equal(apr3))
	}
	for _, k := range old {
		g.Expect(k.Hash(day(1), ua)).To(Equal(apr2))
		g.Expect(k.Hash(day(2), ua)).To(BeZero(), "an old replica hashes a SipHash day with BLAKE2b")
	}

	// A new replica restarted on April 2nd hashes it as before.
	restarted := keeperAt(ns, &now)
	g.Expect(restarted.Sync(ctx)).To(Succeed())
	g.Expect(newHash(restarted, day(1))).To(Equal(apr2))

	// The next midnight, a new replica first again: April 3rd's SipHash
	// salt stays, and the old replicas still do not fight.
	now = time.Date(2026, 4, 3, 0, 0, 2, 0, time.UTC)
	syncNew()
	rv = version()
	syncOld()
	g.Expect(version()).To(Equal(rv))
	g.Expect(newHash(news[1], day(2))).To(Equal(apr3), "April 3rd's visitor changed at its midnight")

	// The upgrade-day exception, said in the package doc: an old replica
	// that rotates first at midnight cannot read today's SipHash salt and
	// replaces it with a BLAKE2b one; from then on every replica uses that,
	// and nobody rewrites again.
	now = time.Date(2026, 4, 4, 0, 0, 2, 0, time.UTC)
	syncOld()
	g.Expect(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: SecretName}, &sec)).To(Succeed())
	g.Expect(analytics.KindOf(sec.Data["2026-04-04"])).To(Equal(analytics.SaltBLAKE2b))
	rv = version()
	syncNew()
	syncOld()
	g.Expect(version()).To(Equal(rv))
	g.Expect(newHash(news[0], day(3))).To(Equal(old[0].Hash(day(3), ua)))
	g.Expect(newHash(news[0], day(3))).NotTo(BeZero())
}

// A salt of a newer kurz (a version this one does not know) is kept when
// this one rotates and is not hashed with: its day counts no visitor here.
func TestNewerSaltIsKeptAndNotUsed(t *testing.T) {
	testenv.Need(t)
	g := NewWithT(t)
	ctx := context.Background()
	ns := "salt-newer"
	g.Expect(k8s.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})).To(Succeed())
	newer := []byte(analytics.SaltVersionPrefix + "v9 some-future-prf key=0123")
	g.Expect(k8s.Create(ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: SecretName},
		Data:       map[string][]byte{"2026-05-01": newer, "2026-05-02": []byte("too short")},
	})).To(Succeed())

	now := time.Date(2026, 5, 1, 9, 0, 0, 0, time.UTC)
	k := keeperAt(ns, &now)
	g.Expect(k.Sync(ctx)).To(Succeed())
	var sec corev1.Secret
	g.Expect(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: SecretName}, &sec)).To(Succeed())
	g.Expect(sec.Data["2026-05-01"]).To(Equal(newer), "a newer kurz's salt was replaced mid-day")
	g.Expect(analytics.KindOf(sec.Data["2026-05-02"])).To(Equal(analytics.SaltSipHash), "an invalid salt was kept")
	_, salts := k.Salts()
	g.Expect(salts).To(HaveLen(1))
	g.Expect(dayKey(salts[0].Day)).To(Equal("2026-05-02"))
}
