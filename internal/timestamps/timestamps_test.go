package timestamps

import (
	"testing"
	"time"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	kurzv1alpha1 "github.com/kurz-dev/kurz/api/v1alpha1"
)

func TestStampLink(t *testing.T) {
	g := NewWithT(t)
	t0 := time.Date(2026, 11, 22, 10, 0, 0, 123456789, time.UTC)
	l := &kurzv1alpha1.Link{ObjectMeta: metav1.ObjectMeta{Generation: 1}}

	g.Expect(StampLink(l, t0)).To(BeTrue(), "a new link is stamped")
	g.Expect(l.Status.CreatedAt.Time).To(Equal(t0.Truncate(time.Microsecond)))
	g.Expect(l.Status.UpdatedAt.Time).To(Equal(t0.Truncate(time.Microsecond)))
	g.Expect(l.Status.UpdatedGeneration).To(Equal(int64(1)))

	g.Expect(StampLink(l, t0.Add(time.Second))).To(BeFalse(), "the same generation is stamped once")
	g.Expect(l.Status.UpdatedAt.Time).To(Equal(t0.Truncate(time.Microsecond)))

	l.Generation = 2
	t1 := t0.Add(time.Minute)
	g.Expect(StampLink(l, t1)).To(BeTrue(), "a spec change is stamped")
	g.Expect(l.Status.CreatedAt.Time).To(Equal(t0.Truncate(time.Microsecond)), "createdAt never changes")
	g.Expect(l.Status.UpdatedAt.Time).To(Equal(t1.Truncate(time.Microsecond)))
	g.Expect(l.Status.UpdatedGeneration).To(Equal(int64(2)))
}

// A link the controller reaches late (a bulk import, a replica that was
// down) is dated by its creationTimestamp, not by the controller's arrival;
// one reached at once keeps the microseconds of now.
func TestStampLinkReachedLate(t *testing.T) {
	created := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		name       string
		generation int64
		after      time.Duration
		want       time.Time
	}{
		{"at once", 1, 1500 * time.Millisecond, created.Add(1500 * time.Millisecond)},
		{"a minute late", 1, time.Minute, created},
		{"a day late", 1, 24 * time.Hour, created},
	} {
		t.Run(c.name, func(t *testing.T) {
			g := NewWithT(t)
			l := &kurzv1alpha1.Link{ObjectMeta: metav1.ObjectMeta{Generation: c.generation, CreationTimestamp: metav1.NewTime(created)}}
			g.Expect(StampLink(l, created.Add(c.after))).To(BeTrue())
			g.Expect(l.Status.CreatedAt.Time).To(Equal(c.want))
			g.Expect(l.Status.UpdatedAt.Time).To(Equal(c.want), "not edited since it was created")
		})
	}

	t.Run("edited before it was reached", func(t *testing.T) {
		g := NewWithT(t)
		now := created.Add(time.Hour)
		l := &kurzv1alpha1.Link{ObjectMeta: metav1.ObjectMeta{Generation: 2, CreationTimestamp: metav1.NewTime(created)}}
		g.Expect(StampLink(l, now)).To(BeTrue())
		g.Expect(l.Status.CreatedAt.Time).To(Equal(created))
		g.Expect(l.Status.UpdatedAt.Time).To(Equal(now), "the edit's time is not known better than now")
	})
}

func TestPrint(t *testing.T) {
	g := NewWithT(t)
	mt := metav1.NewMicroTime(time.Date(2026, 1, 2, 3, 4, 5, 6000, time.UTC))
	g.Expect(Print(&mt, metav1.Time{})).To(Equal("2026-01-02T03:04:05.000006Z"))
	meta := metav1.NewTime(time.Date(2026, 1, 2, 3, 4, 5, 0, time.FixedZone("x", 3600)))
	g.Expect(Print(nil, meta)).To(Equal("2026-01-02T02:04:05.000000Z"))
}

func TestTouchLinkRefreshesTheSameGeneration(t *testing.T) {
	g := NewWithT(t)
	t0 := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	l := &kurzv1alpha1.Link{ObjectMeta: metav1.ObjectMeta{Generation: 3}}
	StampLink(l, t0)

	t1 := t0.Add(time.Second)
	g.Expect(TouchLink(l, t1)).To(BeTrue())
	g.Expect(l.Status.UpdatedAt.Time).To(Equal(t1), "an API update refreshes updated_at without a spec change")
	g.Expect(l.Status.CreatedAt.Time).To(Equal(t0))
	g.Expect(l.Status.UpdatedGeneration).To(Equal(int64(3)))
	g.Expect(StampLink(l, t1.Add(time.Second))).To(BeFalse(), "the controller sees the generation stamped")
}
