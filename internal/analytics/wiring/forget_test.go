package wiring

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	toolscache "k8s.io/client-go/tools/cache"

	kurzv1alpha1 "github.com/kurz-dev/kurz/api/v1alpha1"
	"github.com/kurz-dev/kurz/internal/analytics"
	"github.com/kurz-dev/kurz/internal/analytics/sqlite"
)

// A deleted Link (seen by the informer, also as a tombstone) is marked in
// the store; the maintenance after --analytics-delete-grace removes its
// analytics, and not before.
func TestDeletedLinksAreForgotten(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	so := sqlite.DefaultOptions()
	so.Path = filepath.Join(t.TempDir(), "analytics.db")
	store, err := sqlite.Open(ctx, so)
	g.Expect(err).NotTo(HaveOccurred())
	defer store.Close()

	now := time.Now().UTC().Truncate(time.Minute)
	var events []analytics.Event
	for _, uid := range []string{"gone", "tomb", "kept"} {
		events = append(events, analytics.Event{Time: now, Link: analytics.LinkRef{UID: uid, Namespace: "ns"}, Clicks: 2, Device: analytics.DeviceDesktop})
	}
	g.Expect(store.Write(ctx, analytics.Batch{ID: "t-1", Events: events})).To(Succeed())

	k := &keeper{store: store}
	k.deleted(&kurzv1alpha1.Link{ObjectMeta: metav1.ObjectMeta{UID: "gone"}})
	k.deleted(toolscache.DeletedFinalStateUnknown{Obj: &kurzv1alpha1.Link{ObjectMeta: metav1.ObjectMeta{UID: "tomb"}}})
	g.Expect(k.forget(ctx)).To(Succeed())

	links := func() map[string]int64 {
		res, err := store.Query(ctx, analytics.Query{Namespace: "ns", Start: now.Add(-time.Hour), End: now.Add(time.Hour),
			Granularity: analytics.Hour, GroupBy: analytics.GroupByLink, Limit: 10, Source: analytics.SourceEvents})
		g.Expect(err).NotTo(HaveOccurred())
		out := map[string]int64{}
		for _, r := range res.Rows {
			out[r.Key] = r.Clicks
		}
		return out
	}
	g.Expect(store.Maintain(ctx, now.Add(so.DeleteGrace-time.Hour))).To(Succeed())
	g.Expect(links()).To(Equal(map[string]int64{"gone": 2, "tomb": 2, "kept": 2}), "within the grace")
	g.Expect(store.Maintain(ctx, now.Add(so.DeleteGrace+time.Hour))).To(Succeed())
	g.Expect(links()).To(Equal(map[string]int64{"kept": 2}), "after the grace")
}
