package salt

import (
	"context"
	"net/netip"
	"sync"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kurz-dev/kurz/internal/analytics"
	"github.com/kurz-dev/kurz/internal/testenv"
)

var k8s client.Client

func TestMain(m *testing.M) {
	testenv.Main(m, testenv.Options{}, func(e *testenv.Env) error {
		k8s = e.Client
		return nil
	})
}

func keeperAt(ns string, now *time.Time) *Keeper {
	k := NewKeeper(k8s, k8s, ns)
	k.now = func() time.Time { return *now }
	return k
}

// Replicas racing to create and rotate the Secret end up with the same
// salts: one write wins, the others read it. At midnight UTC yesterday's
// salt goes, today's stays the same (it was tomorrow's), a new tomorrow's
// comes.
func TestReplicasShareAndRotateSalts(t *testing.T) {
	testenv.Need(t)
	g := NewWithT(t)
	ctx := context.Background()
	ns := "salt-test"
	g.Expect(k8s.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})).To(Succeed())

	now := time.Date(2026, 3, 1, 23, 59, 0, 0, time.UTC)
	keepers := []*Keeper{keeperAt(ns, &now), keeperAt(ns, &now), keeperAt(ns, &now)}
	syncAll := func() {
		var wg sync.WaitGroup
		for _, k := range keepers {
			wg.Go(func() { g.Expect(k.Sync(ctx)).To(Succeed()) })
		}
		wg.Wait()
	}
	syncAll()
	_, first := keepers[0].Salts()
	g.Expect(first).To(HaveLen(2))
	for _, k := range keepers[1:] {
		_, s := k.Salts()
		g.Expect(s).To(Equal(first), "every replica has the same salts")
	}
	h1, err := analytics.NewVisitors(first...)
	g.Expect(err).NotTo(HaveOccurred())

	now = now.Add(2 * time.Minute) // March 2nd, 00:01
	syncAll()
	gen, second := keepers[1].Salts()
	g.Expect(gen).To(BeEquivalentTo(2), "one change of salts")
	g.Expect(second).To(HaveLen(2))
	g.Expect(second[0].Salt).To(Equal(first[1].Salt), "today's salt is yesterday's tomorrow")
	g.Expect(second[1].Salt).NotTo(Equal(first[1].Salt))
	for _, k := range keepers {
		_, s := k.Salts()
		g.Expect(s).To(Equal(second))
	}
	var sec corev1.Secret
	g.Expect(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: SecretName}, &sec)).To(Succeed())
	g.Expect(sec.Data).To(HaveLen(2))
	g.Expect(sec.Data).To(HaveKey("2026-03-02"))
	g.Expect(sec.Data).To(HaveKey("2026-03-03"))
	g.Expect(sec.Data).NotTo(HaveKey("2026-03-01"), "yesterday's salt is destroyed")

	// A click of March 2nd hashes alike before and after the rotation.
	h2, err := analytics.NewVisitors(second...)
	g.Expect(err).NotTo(HaveOccurred())
	ua := []byte("Mozilla/5.0")
	at := time.Date(2026, 3, 2, 12, 0, 0, 0, time.UTC)
	ip := netipAddr("192.0.2.7")
	g.Expect(h1.Hash(at, ip, ua)).To(Equal(h2.Hash(at, ip, ua)))
	g.Expect(h1.Hash(at, ip, ua)).NotTo(BeZero())
}

func netipAddr(s string) netip.Addr { return netip.MustParseAddr(s) }
